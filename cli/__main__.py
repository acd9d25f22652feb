"""python -m cli: the `plan` command."""

import sys

from cli.exits import run_main


def main() -> int:
    def body() -> int:
        from cli import workflows
        from cli.main import dispatch  # imports click: a missing one is reported in one line

        workflows.register_all()  # `plan status` shows where the session's workflow leads
        return dispatch(sys.argv[1:])

    return run_main("plan", body)


if __name__ == "__main__":
    sys.exit(main())
