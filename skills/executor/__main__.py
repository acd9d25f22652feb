"""`executor` (python -m skills.executor): the 9-step execution workflow."""

import sys


def main() -> int:
    from shared.stepcli import main as step_main
    from skills import workflows

    load, start = workflows("executor")
    return step_main("executor", load, start)


if __name__ == "__main__":
    sys.exit(main())
