"""Signed approvals through git's own signing key (PRODUCT.md §13): ssh and OpenPGP.

The signed payload names the session and the approved sha256; `plan verify` checks it with
git's trust settings (gpg.ssh.allowedSignersFile for ssh, the gpg keyring for OpenPGP).
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from state.errors import PreconditionFailed, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAMESPACE = "planner"  # ssh-keygen -Y's namespace: a planner signature is not a git one


def payload(session_id: str, sha256: str) -> bytes:
    """What is signed: the session and the approved content's hash."""
    return f"planner approval\nsession {session_id}\nsha256 {sha256}\n".encode()


def git_config(root: str, key: str) -> str:
    from state import git

    return git.run(root or None, "config", "--get", key).stdout.decode(errors="replace").strip()


def sign(root: str, session_id: str, sha256: str) -> dict[str, Any]:
    """The signature record for session.json's approval, made with user.signingkey."""
    key = git_config(root, "user.signingkey")
    fmt = git_config(root, "gpg.format") or "openpgp"
    if fmt not in ("ssh", "openpgp"):
        raise UsageError(f"--sign: gpg.format {fmt} is not supported (ssh or openpgp)")
    if not key and fmt == "ssh":
        raise UsageError(
            "--sign: no signing key: set it as git does "
            "(git config gpg.format ssh; git config user.signingkey ~/.ssh/id_ed25519.pub)"
        )
    data = payload(session_id, sha256)
    if fmt == "ssh":
        if key.startswith("key::"):
            raise UsageError("--sign: a literal key:: signing key needs ssh-agent; use a key file")
        argv = ["ssh-keygen", "-Y", "sign", "-n", NAMESPACE, "-f", os.path.expanduser(key)]
    else:
        program = git_config(root, "gpg.openpgp.program") or git_config(root, "gpg.program")
        argv = [program or "gpg", "--batch", "--armor", "--detach-sign"]
        argv += ["--local-user", key] if key else []
    done = _run(argv, data)
    if done.returncode != 0 or not done.stdout.strip():
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        raise PreconditionFailed(
            f"--sign: {argv[0]} could not sign ({reason[-1] if reason else 'no signature'}); "
            "nothing was written"
        )
    return {"format": fmt, "key": key, "signature": done.stdout.decode()}


def _run(argv: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(argv, input=data, capture_output=True, timeout=120)
    except FileNotFoundError:
        raise UsageError(f"--sign: {argv[0]} is not installed") from None


def check(
    session: dict[str, Any], approval: dict[str, Any], root: str, required: bool
) -> list[tuple[str, str]]:
    """(message, fix) for a signature that does not verify, or a missing one when required."""
    record = approval.get("signature")
    if not record:
        if required:
            return [("the approval is not signed", "plan review approve --sign")]
        return []
    data = payload(session["id"], approval["sha256"])
    with tempfile.TemporaryDirectory() as tmp:
        signature = os.path.join(tmp, "approval.sig")
        with open(signature, "w", encoding="utf-8") as f:
            f.write(record["signature"])
        if record["format"] == "ssh":
            return _check_ssh(root, data, signature)
        program = git_config(root, "gpg.openpgp.program") or git_config(root, "gpg.program")
        done = _run([program or "gpg", "--batch", "--verify", signature, "-"], data)
    if done.returncode != 0:
        return [(_last_line(done, "the OpenPGP signature does not verify"), "")]
    return []


def _check_ssh(root: str, data: bytes, signature: str) -> list[tuple[str, str]]:
    allowed = git_config(root, "gpg.ssh.allowedSignersFile")
    if not allowed:
        return [
            (
                "the approval is signed, but gpg.ssh.allowedSignersFile is not set: "
                "nobody is trusted to sign",
                "git config gpg.ssh.allowedSignersFile FILE",
            )
        ]
    allowed = os.path.join(root, os.path.expanduser(allowed))
    found = _run(
        ["ssh-keygen", "-Y", "find-principals", "-f", allowed, "-s", signature, "-n", NAMESPACE],
        b"",
    )
    principals = found.stdout.decode().split()
    if found.returncode != 0 or not principals:
        return [("the approval's signing key is not in gpg.ssh.allowedSignersFile", "")]
    argv = ["ssh-keygen", "-Y", "verify", "-f", allowed, "-I", principals[0], "-n", NAMESPACE]
    done = _run([*argv, "-s", signature], data)
    if done.returncode != 0:
        return [
            (
                "the approval signature does not verify: the session or its approved "
                "sha256 changed after signing",
                "",
            )
        ]
    return []


def _last_line(done: subprocess.CompletedProcess[bytes], default: str) -> str:
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return f"{default}: {lines[-1]}" if lines else default
