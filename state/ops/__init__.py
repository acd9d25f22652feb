"""The operations: every change to a session, each inside one store transaction.

Each operation takes the open transaction and the command's own parameters as keywords, by
their click names (repeatable ones as lists): (tx, *, ...); it returns the ids it created.
cli/commands/ declares the parameters; state/ parses none and names fields, not options
(PlannerError.field).
"""
