__planner__ = True  # this package is planner's (planner_entry.py checks it)
