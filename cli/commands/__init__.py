"""The `plan` commands, one module per area; cli/main.py loads a module when its command runs."""
