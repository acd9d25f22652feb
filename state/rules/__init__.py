"""The rules of a session: its lifecycle, the freeze, amendment rounds, approvals, and the
store that holds every write to them (policy.py). Above storage, git and validation."""
