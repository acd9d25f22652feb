"""Milestone waves from depends_on: wave 1 needs nothing, wave n needs only earlier waves."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.documents import Milestone, Wave


def find_cycle(depends: dict[str, list[str]]) -> list[str]:
    """One dependency cycle as [a, b, …, a], or [] when there is none."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in depends:
        if state.get(start):
            continue
        path: list[str] = []
        stack = [(start, iter(depends.get(start, [])))]
        state[start] = 1
        path.append(start)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(child) == 1:
                return [*path[path.index(child) :], child]
            elif not state.get(child) and child in depends:
                state[child] = 1
                path.append(child)
                stack.append((child, iter(depends.get(child, []))))
    return []


def changed_files(milestone: Milestone) -> set[str]:
    """The files a milestone changes: named, intended or with a planned diff (test files it
    only runs are not among them)."""
    files = set(milestone["files"]) | {i["file"] for i in milestone["code_intents"]}
    return (files | {c["file"] for c in milestone["code_changes"]}) - {""}


def compute_waves(milestones: list[Milestone]) -> list[Wave]:
    """Kahn's layering, plan order within a wave; milestones in a cycle are left out."""
    order = {m["id"]: i for i, m in enumerate(milestones)}
    needs = {
        m["id"]: {d for d in m["depends_on"] if d in order and d != m["id"]} for m in milestones
    }
    users: dict[str, list[str]] = {mid: [] for mid in order}
    for mid, deps in needs.items():
        for dep in deps:
            users[dep].append(mid)
    remaining = {mid: len(deps) for mid, deps in needs.items()}
    current = [mid for mid in order if not remaining[mid]]
    waves: list[Wave] = []
    while current:
        waves.append({"wave": len(waves) + 1, "milestones": current})
        ready = []
        for mid in current:
            for user in users[mid]:
                remaining[user] -= 1
                if not remaining[user]:
                    ready.append(user)
        current = sorted(ready, key=order.__getitem__)
    return waves


def diagram(waves: list[Wave], milestones: list[Milestone]) -> str:
    """A few lines of ASCII: one line a wave, each milestone with what it depends on."""
    by_id = {m["id"]: m for m in milestones}
    lines = []
    for wave in waves:
        parts = []
        for mid in wave["milestones"]:
            needs = by_id[mid]["depends_on"]
            parts.append(f"{mid}" + (f" (after {', '.join(needs)})" if needs else ""))
        lines.append(f"wave {wave['wave']}: " + " | ".join(parts))
    return "\n".join(lines)
