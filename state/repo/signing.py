"""Signed approvals through git's own signing key, ssh and OpenPGP: what is signed (versions 1
to 3) and how `plan verify` checks it and names the signer: docs/design.md, "Signed approvals".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile

from state.errors import Finding, PreconditionFailed, UsageError
from state.repo import git
from state.vocab import ReviewVerdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.documents import Approval, Review, Session, Signature

NAMESPACE = "planner"  # ssh-keygen -Y's namespace: a planner signature is not a git one
VERSION = 3
WHERE = "session.json:approval.signature"


def payload(
    session_id: str, approval: Approval, version: int = VERSION, rounds: list[Review] | None = None
) -> bytes:
    """What is signed: a canonical JSON record (keys sorted, no whitespace, UTF-8) of session,
    by, at and sha256, and from version 3 the review `rounds` up to the approval (round,
    verdict, by, sha256 of each); version 1 named the session and the sha256 only."""
    if version == 1:
        return f"planner approval\nsession {session_id}\nsha256 {approval['sha256']}\n".encode()
    record: dict[str, object] = {
        "at": approval["at"],
        "by": approval["by"],
        "session": session_id,
        "sha256": approval["sha256"],
    }
    if version >= 3:
        record["rounds"] = [
            {"round": r["round"], "verdict": r["verdict"], "by": r["by"], "sha256": r["sha256"]}
            for r in rounds or []
        ]
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"planner approval v{version}\n{canonical}\n".encode()


def signed_rounds(session: Session, approval: Approval) -> list[Review]:
    """The review rounds a signature of `approval` covers: every round up to the last one that
    approved its hash (the approval's own round), or all of them when none did."""
    reviews = session["reviews"]
    for index in range(len(reviews) - 1, -1, -1):
        r = reviews[index]
        if r["verdict"] == ReviewVerdict.APPROVED and r["sha256"] == approval["sha256"]:
            return reviews[: index + 1]
    return reviews


def git_config(root: str, key: str) -> str:
    return git.run(root or None, "config", "--get", key).stdout.decode(errors="replace").strip()


def sign(root: str, session: Session, approval: Approval) -> Signature:
    """The signature record for session.json's approval (its review round already closed),
    made with user.signingkey: the format, the version, the key's fingerprint (never its local
    path) and the signature."""
    key = git_config(root, "user.signingkey")
    fmt = git_config(root, "gpg.format") or "openpgp"
    if fmt not in ("ssh", "openpgp"):
        raise UsageError(f"sign: gpg.format {fmt} is not supported (ssh or openpgp)", field="sign")
    if not key and fmt == "ssh":
        raise UsageError(
            "sign: no signing key: set it as git does "
            "(git config gpg.format ssh; git config user.signingkey ~/.ssh/id_ed25519.pub)",
            field="sign",
        )
    data = payload(session["id"], approval, VERSION, signed_rounds(session, approval))
    if fmt == "ssh":
        if key.startswith("key::"):
            raise UsageError(
                "sign: a literal key:: signing key needs ssh-agent; use a key file", field="sign"
            )
        argv = ["ssh-keygen", "-Y", "sign", "-n", NAMESPACE, "-f", os.path.expanduser(key)]
    else:
        argv = [_gpg(root), "--batch", "--armor", "--status-fd", "2", "--detach-sign"]
        argv += ["--local-user", key] if key else []
    done = _run(argv, data)
    if done.returncode != 0 or not done.stdout.strip():
        raise PreconditionFailed(
            f"sign: {argv[0]} could not sign ({_said(done) or 'no signature'}); "
            "nothing was written",
            field="sign",
        )
    signature = done.stdout.decode()
    if fmt == "ssh":
        fingerprint = _ssh_fingerprint(signature, data)
    else:
        created = re.search(r"^\[GNUPG:\] SIG_CREATED (?:\S+ ){5}(\S+)", _err(done), re.M)
        fingerprint = created.group(1) if created else ""
    return {
        "format": "ssh" if fmt == "ssh" else "openpgp",
        "version": VERSION,
        "fingerprint": fingerprint,
        "signature": signature,
        "key": "",  # version 1 named the local key here; last, where the schema's default goes
    }


def _gpg(root: str) -> str:
    return git_config(root, "gpg.openpgp.program") or git_config(root, "gpg.program") or "gpg"


def _err(done: subprocess.CompletedProcess[bytes]) -> str:
    return done.stderr.decode(errors="replace")


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    """The last line the program wrote to stderr that is not a gpg status line, or ""."""
    lines = [line for line in _err(done).strip().splitlines() if not line.startswith("[GNUPG:]")]
    return lines[-1] if lines else ""


def _key_of(done: subprocess.CompletedProcess[bytes]) -> str:
    """The SHA256:… fingerprint ssh-keygen names in its output, or ""."""
    found = re.search(r"key (SHA256:\S+)", done.stdout.decode(errors="replace") + _err(done))
    return found.group(1) if found else ""


def _ssh_fingerprint(signature: str, data: bytes) -> str:
    """The SHA256:… fingerprint of the key that made an ssh signature (from the signature)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "approval.sig")
        with open(path, "w", encoding="utf-8") as f:
            f.write(signature)
        done = _run(["ssh-keygen", "-Y", "check-novalidate", "-n", NAMESPACE, "-s", path], data)
    return _key_of(done)


def _run(argv: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(argv, input=data, capture_output=True, timeout=120)
    except FileNotFoundError:
        raise UsageError(f"sign: {argv[0]} is not installed", field="sign") from None


class Checked:
    """What `plan verify` found about an approval's signature: who signed it (the principal
    git's trust settings give the key), the key's fingerprint, and the problems."""

    def __init__(self) -> None:
        self.principals: list[str] = []
        self.fingerprint = ""
        self.format = ""
        self.findings: list[Finding] = []

    @property
    def signer(self) -> str:
        return ", ".join(self.principals)

    def problem(self, rule: str, message: str, fix: str = "", level: str = "error") -> Checked:
        self.findings.append(Finding(WHERE, message, fix, level, rule))
        return self


def check(
    session: Session, approval: Approval, root: str, required: bool, signer_must_match: bool = False
) -> Checked:
    """Check a present signature (a missing one is a problem when `required`); a signer who
    is not the approver is a warning, an error when `signer_must_match`."""
    result = Checked()
    record = approval["signature"]
    if not record:
        if required:
            result.problem("unsigned", "the approval is not signed", "plan review approve --sign")
        return result
    result.format = record["format"]
    version = record["version"] or 1
    data = payload(session["id"], approval, version, signed_rounds(session, approval))
    with tempfile.TemporaryDirectory() as tmp:
        signature = os.path.join(tmp, "approval.sig")
        with open(signature, "w", encoding="utf-8") as f:
            f.write(record["signature"])
        if record["format"] == "ssh":
            _check_ssh(root, data, signature, result)
        else:
            _check_openpgp(root, data, signature, result)
    if result.findings:
        return result
    if version == 1:
        result.problem(
            "signature-old-form",
            "signed the old way (version 1): the signature covers the session and sha256, "
            "not who approved or when",
            "re-approve with plan review approve --sign",
            "error" if required else "warning",
        )
    elif version == 2:
        result.problem(
            "signature-old-form",
            "signed as version 2: the signature covers who approved, when and the sha256, not "
            "who gave the earlier review rounds",
            "re-approve with plan review approve --sign",
            "warning",
        )
    if not any(matches(p, approval["by"]) for p in result.principals):
        result.problem(
            "signer-mismatch",
            f"signed by {result.signer or 'an unnamed key'}, but approved by {approval['by']}",
            "the approver signs (plan review approve --by NAME --sign)",
            "error" if signer_must_match else "warning",
        )
    return result


def matches(principal: str, by: str) -> bool:
    """Whether a signer's principal names the approver: the same text, or the name or email
    of a `Name <email>` identity (case-insensitive)."""
    names = {principal}
    parts = re.fullmatch(r"\s*(.*?)\s*<([^>]*)>\s*", principal)
    if parts:
        names |= {parts.group(1), parts.group(2)}
    return by.strip().casefold() in {n.strip().casefold() for n in names if n.strip()}


def _check_openpgp(root: str, data: bytes, signature: str, result: Checked) -> None:
    done = _run([_gpg(root), "--batch", "--status-fd", "2", "--verify", signature, "-"], data)
    status = _err(done)
    good = re.search(r"^\[GNUPG:\] GOODSIG \S+ (.+)$", status, re.M)
    valid = re.search(r"^\[GNUPG:\] VALIDSIG (\S+)", status, re.M)
    if done.returncode != 0 or not good:
        reason = f": {_said(done)}" if _said(done) else ""
        result.problem("signature-invalid", f"the OpenPGP signature does not verify{reason}")
        return
    result.principals = [good.group(1).strip()]
    result.fingerprint = valid.group(1) if valid else ""


def _check_ssh(root: str, data: bytes, signature: str, result: Checked) -> None:
    allowed = git_config(root, "gpg.ssh.allowedSignersFile")
    if not allowed:
        result.problem(
            "signer-untrusted",
            "the approval is signed, but gpg.ssh.allowedSignersFile is not set: "
            "nobody is trusted to sign",
            "git config gpg.ssh.allowedSignersFile FILE",
        )
        return
    allowed = os.path.join(root, os.path.expanduser(allowed))
    found = _run(
        ["ssh-keygen", "-Y", "find-principals", "-f", allowed, "-s", signature, "-n", NAMESPACE],
        b"",
    )
    principals = found.stdout.decode(errors="replace").split()
    if found.returncode != 0 or not principals:
        result.problem(
            "signer-untrusted", "the approval's signing key is not in gpg.ssh.allowedSignersFile"
        )
        return
    argv = ["ssh-keygen", "-Y", "verify", "-f", allowed, "-I", principals[0], "-n", NAMESPACE]
    done = _run([*argv, "-s", signature], data)
    if done.returncode != 0:
        result.problem(
            "signature-invalid",
            "the approval signature does not verify: the session, who approved, when, the "
            "approved sha256, or who gave a review round changed after signing",
        )
        return
    result.principals = principals
    result.fingerprint = _key_of(done)
