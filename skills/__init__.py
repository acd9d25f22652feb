"""The two workflows: skills/planner and skills/executor (the entry points in cli/ register them
with the engine)."""
