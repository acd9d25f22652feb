"""The programs the clients run as hooks (the read-only guard, SessionStart, the bootstrap
of the plugin's environment) and what they share; standard library only (docs/design.md,
"The guard")."""

__planner__ = True  # this package is planner's (planner_entry.py checks it)
