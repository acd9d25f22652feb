"""The result as terminal text (`plan result show`): per milestone the planned diff, then
what its commits did (only where they differ from the plan), the tests and deviations, then
the reconcile table. After a round that asked for changes, only what that round did not see
is printed (the rest one line a milestone; `--all` prints everything)."""

from __future__ import annotations

from state.ops.result_view import gone_commits
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.ops.result_view import DiffLine, MilestoneResult, Result
    from state.storage.documents import Session


def diff_text(lines: list[DiffLine]) -> list[str]:
    """A diff's lines with the new-file line number a comment names (M-001:FILE:LINE=…)."""
    return [f"  {'' if x['new'] is None else str(x['new']):>5} {x['text']}" for x in lines]


BODY = ("add", "del", "ctx")


def body(lines: list[DiffLine]) -> list[tuple[int | None, int | None, str, str]]:
    """What a diff changes, numbered (its headers and hunk lines left out): two diffs with
    the same body show the same lines under the same numbers."""
    return [(x["old"], x["new"], x["kind"], x["text"]) for x in lines if x["kind"] in BODY]


def stats(lines: list[DiffLine]) -> str:
    kinds = [x["kind"] for x in lines]
    return f"+{kinds.count('add')} -{kinds.count('del')}"


def milestone_text(m: MilestoneResult) -> list[str]:
    """A milestone's planned diffs, then its commits: a commit's file whose diff is a planned
    one, line for line, is named by it ("= CC-001"), not printed again; one that is several
    planned changes applied in order is printed once, in the commit, each of them one line."""
    lines = [f"{m['id']} {m['name']} ({m['status']})"]
    planned: dict[tuple[str, str], list[str]] = {}
    together = {
        cid: f["planned"]
        for c in m["commits"]
        for f in c["files"]
        if "planned" in f
        for cid in f["planned"]
    }
    for change in m["planned"]:
        if change["id"] in together:
            others = ", ".join(i for i in together[change["id"]] if i != change["id"])
            lines.append(
                f" planned {change['id']} {change['file']} ({stats(change['lines'])}): with "
                f"{others}, in the commit's diff below"
            )
            continue
        lines += [f" planned {change['id']} {change['file']}:", *diff_text(change["lines"])]
        key = (change["file"], repr(body(change["lines"])))
        planned.setdefault(key, []).append(change["id"])
    if not m["commits"]:
        lines.append(" committed: nothing")
    for commit in m["commits"]:
        if commit.get("gone"):
            lines.append(f" commit gone: {commit['sha']} ({commit['subject']})")
            continue
        lines.append(f" commit {commit['short']} {commit['subject']}")
        for f in commit["files"]:
            same = planned.get((f["path"], repr(body(f["lines"]))))
            if same and "planned" not in f:
                lines.append(f"  {f['path']}: = {', '.join(same)} (as planned, numbered above)")
            else:
                said = f": = {' then '.join(f['planned'])} (as planned)" if "planned" in f else ""
                lines += [f"  {f['path']}{said}:", *diff_text(f["lines"])]
    lines += [f" test {t['file']}: {'ran' if t['ran'] else 'NOT RUN'}" for t in m["tests"]]
    lines += [f" evidence: {e}" for e in m["evidence"]]
    return lines + [f" deviation {d['id']}: {d['description']}" for d in m["deviations"]]


def reconcile_rows(result: Result) -> list[str]:
    lines = ["milestone  status       changed/planned  untouched"]
    for m in result["milestones"]:
        row = m["reconcile"]
        counts = f"{len(row['changed_files'])}/{len(row['planned_files'])}" if row else "0/0"
        untouched = (", ".join(row["untouched_planned_files"]) if row else "") or "-"
        lines.append(f"{m['id']:<10} {m['status']:<12} {counts:<16} {untouched}")
    lines.append("unplanned changes: " + (", ".join(result["unplanned_changes"]) or "none"))
    return lines


def text(result: Result, session: Session, since: tuple[int, list[str]] | None = None) -> str:
    """What `plan result show` prints; with `since` (the round that asked for changes and
    the milestones carried out since), those milestones whole and the others one line each."""
    rounds = session["result_reviews"]
    lines = [
        f"result of {session['id']}: {result['title'] or session['task']}",
        f"status {session['status']}"
        + (f", result round {rounds[-1]['round']} {rounds[-1]['verdict']}" if rounds else ""),
        f"sha256 {result['sha256']}",
    ]
    if lost := gone_commits(result):
        named = ", ".join(f"{mid} {sha[:12]}" for mid, sha in lost)
        lines.append(
            f"commits gone from git: {named} (history rewritten and pruned; the planned diffs "
            "are shown, the verdict still stands; fix: plan rebase)"
        )
    lines.append("")
    if since:
        n, new = since
        lines += [
            f"since result round {n}: {', '.join(new) or 'no milestone'} (the others as round "
            f"{n} showed them; everything: plan result show --all)",
            "",
        ]
    for m in result["milestones"]:
        if not since or m["id"] in since[1]:
            lines += [*milestone_text(m), ""]
        else:
            lines.append(
                f"{m['id']} {m['name']} ({m['status']}): as result round {since[0]} saw it"
            )
    lines += ["reconcile:", *reconcile_rows(result)]
    if result["tests_run"]:
        lines.append("tests run: " + "; ".join(result["tests_run"]))
    if session["status"] == S.RESULT_REVIEW:
        lines += [
            "",
            "Your verdict: plan result accept [--by NAME], or plan result request-changes "
            "--feedback TEXT [--comment ANCHOR=TEXT]... (or the page: plan review open); an "
            "anchor is M-001, M-001:FILE:LINE (a commit's line, numbered above), CC-004:LINE "
            "or DV-001",
        ]
    return "\n".join(lines)
