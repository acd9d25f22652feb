"""`planner` (python -m skills.planner): the 11-step planning workflow."""

import sys


def main() -> int:
    from shared.stepcli import main as step_main
    from skills import workflows

    load, start = workflows("planner")
    return step_main("planner", load, start)


if __name__ == "__main__":
    sys.exit(main())
