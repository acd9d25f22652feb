"""python -m cli: the `plan` command."""

import sys

from cli import workflows


def main() -> int:
    from cli.main import main as plan_main

    workflows.register_all()  # `plan status` shows where the session's workflow leads
    return plan_main()


if __name__ == "__main__":
    sys.exit(main())
