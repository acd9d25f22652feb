"""python -m cli: the `plan` command."""

import sys


def main() -> int:
    from cli.main import main as plan_main

    return plan_main()


if __name__ == "__main__":
    sys.exit(main())
