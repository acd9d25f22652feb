"""The two workflows: skills/planner and skills/executor (the entry points in cli/ register them
with the engine)."""

__planner__ = True  # this package is planner's (planner_entry.py checks it)
