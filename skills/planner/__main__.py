"""`python -m skills.planner`: the `planner` step script (its entry point is cli/steps.py)."""

import sys

from cli.steps import planner as main

if __name__ == "__main__":
    sys.exit(main())
