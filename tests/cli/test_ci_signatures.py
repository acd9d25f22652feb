"""Signed approvals as `plan verify` checks them: a signature covers who and when and names
the signer, a signer who is not the approver warns (or fails when required), an old-form
signature says it covers less; what is signed, generated."""

from __future__ import annotations

import json
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.test_ci import approved
from tests.conftest import Plan, git


def ssh_signer(project: Path, tmp_path: Path, principal: str = "ann@example.com") -> Path:
    """An ed25519 key as git's signing key, trusted for `principal` in allowed signers."""
    key = tmp_path / "keys" / "id_ed25519"
    key.parent.mkdir()
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ann", "-f", str(key)], check=True
    )
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"{principal} {key.with_suffix('.pub').read_text()}")
    git(project, "config", "gpg.format", "ssh")
    git(project, "config", "user.signingkey", str(key))
    git(project, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    return key


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_a_signature_covers_who_and_when_and_names_the_signer(
    project: Path, tmp_path: Path
) -> None:
    key = ssh_signer(project, tmp_path)
    directory = approved(project, "s", "--by", "ann@example.com", "--sign")
    text = (directory / "session.json").read_text()
    assert str(key) not in text and "keys" not in text  # no local key path is stored
    record = json.loads(text)["approval"]["signature"]
    assert record["version"] == 3 and record["fingerprint"].startswith("SHA256:")
    assert record.get("key", "") == ""  # the old field, empty
    plan = Plan(project)
    done = plan("verify", ".planner/s", "--require-signature", "--require-signer-match")
    assert f"signed by ann@example.com ({record['fingerprint']})" in done.stdout
    signer = json.loads(plan("verify", ".planner/s", "--json").stdout)["targets"][0]["signer"]
    assert signer == {
        "principal": "ann@example.com",
        "fingerprint": record["fingerprint"],
        "format": "ssh",
    }

    # Another approver and another time (plan.md left out, so only the signature can tell).

    session = json.loads(text)
    session["approval"].update(by="mallory", at="2020-01-01T00:00:00Z")
    session["reviews"][-1]["by"] = "mallory"
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    (directory / "plan.md").unlink()
    done = plan("verify", ".planner/s", "--require-signature", "--format", "github", code=3)
    assert "(signature-invalid)::" in done.stdout and "who approved, when" in done.stdout


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_a_signer_who_is_not_the_approver_warns_and_can_be_required_to_match(
    project: Path, tmp_path: Path
) -> None:
    ssh_signer(project, tmp_path)
    approved(project, "s", "--by", "Bob", "--sign")
    plan = Plan(project)
    done = plan("verify", ".planner/s")  # a warning: exit 0
    assert "warning: approval.signature: signed by ann@example.com, but approved by Bob" in (
        done.stdout.replace("session.json:", "")
    )
    plan("verify", ".planner/s", "--strict", code=3)
    done = plan("verify", ".planner/s", "--require-signer-match", "--json", code=3)
    finding = json.loads(done.stdout)["targets"][0]["findings"][0]
    assert (finding["rule"], finding["level"]) == ("signer-mismatch", "error")


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_an_old_form_signature_is_checked_and_said_to_cover_less(
    project: Path, tmp_path: Path
) -> None:
    """A version 1 record (session id and sha256 signed, the key's path stored), as sessions
    signed before round 2 have it."""
    key = ssh_signer(project, tmp_path)
    directory = approved(project, "s", "--by", "ann@example.com")
    session = json.loads((directory / "session.json").read_text())
    approval = session["approval"]
    old = f"planner approval\nsession {session['id']}\nsha256 {approval['sha256']}\n"
    signed = subprocess.run(
        ["ssh-keygen", "-Y", "sign", "-n", "planner", "-f", str(key)],
        input=old.encode(),
        capture_output=True,
        check=True,
    )
    approval["signature"] = {
        "format": "ssh",
        "key": str(key),
        "signature": signed.stdout.decode(),
    }
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    plan = Plan(project)
    done = plan("verify", ".planner/s")
    assert "warning: " in done.stdout and "signed the old way (version 1)" in done.stdout
    assert "(signature-old-form)" in done.stdout
    plan("verify", ".planner/s", "--require-signature", code=3)
    plan("verify", ".planner/s", "--strict", code=3)
    approval["sha256"] = "0" * 64  # and a version 1 signature that does not verify
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    plan("verify", ".planner/s", code=3)


names = st.text(alphabet=string.ascii_letters + " .-_'", min_size=1, max_size=20).filter(
    lambda s: s.strip() and "<" not in s
)


@settings(max_examples=50, deadline=None)
@given(name=names, user=st.from_regex(r"[a-z]{1,8}", fullmatch=True))
def test_a_signer_matches_by_name_or_email_ignoring_case(name: str, user: str) -> None:
    from state.repo.signing import matches

    email = f"{user}@example.com"
    identity = f"{name} <{email}>"
    assert matches(identity, name.strip().upper()) and matches(identity, email.upper())
    assert matches(email, email) and not matches(email, f"x{user}")
    assert not matches(identity, f"{name.strip()}x")


@settings(max_examples=50, deadline=None)
@given(
    by=st.text(min_size=1, max_size=30),
    other=st.text(min_size=1, max_size=30),
    when=st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
)
def test_what_is_signed_changes_with_who_and_when(by: str, other: str, when: str) -> None:
    """Version 2 signs a canonical record: any other approver or time is other bytes."""
    from state.repo.signing import payload

    approval = {"by": by, "at": "2026-01-01T00:00:00Z", "sha256": "a" * 64}
    signed = payload("s-1", approval)
    assert signed == payload("s-1", dict(reversed(list(approval.items()))))  # key order
    if other != by:
        assert payload("s-1", {**approval, "by": other}) != signed
    if when != approval["at"]:
        assert payload("s-1", {**approval, "at": when}) != signed
    assert payload("s-1", {**approval, "by": other}, version=1) == payload("s-1", approval, 1)
