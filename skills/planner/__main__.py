"""`python -m skills.planner`: the `planner` console script. Like the script pip writes, it
names its entry point (pyproject's [project.scripts]) as data: the composition root, cli/, is
above this layer (docs/design.md, "Layers")."""

import sys
from pkgutil import resolve_name

if __name__ == "__main__":
    sys.exit(resolve_name("cli.steps:planner")())
