"""`python -m skills.executor`: the `executor` step script (its entry point is cli/steps.py)."""

import sys

from cli.steps import executor as main

if __name__ == "__main__":
    sys.exit(main())
