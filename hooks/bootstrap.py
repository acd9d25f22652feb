"""The plugin's own Python environment: made on first use, then every launcher runs in it.

Standard library only, run as `python3 -S -I hooks/bootstrap.py` (by the bin/ launchers and
the SessionStart hook) before any environment exists; it must parse on Python 3.8+ so that it
can say they are too old.

Where: `$PLANNER_DATA_DIR`, else `$CLAUDE_PLUGIN_DATA` (Claude Code), else
`${XDG_DATA_HOME:-~/.local/share}/planner/<plugin folder name>-<crc32 of its path>`. In it,
`venv` is a symlink to the environment in use (`venv-<version>-<token>/`, which records what
it was made from in `planner-env.json`), `venv.lock` serialises the builders and
`bootstrap.log` keeps the installers' output.

    bootstrap.py run NAME [ARGS...]   run `NAME` (planner, executor, plan) in the environment
    bootstrap.py session-start        the SessionStart hook: start a build in the background
    bootstrap.py ensure | rebuild     make the environment (both stages) if needed | anew
    bootstrap.py where                print the data directory and the environment in use

An environment is made with `uv` when it is on PATH (`uv venv` + `uv pip install`), else with
`python3 -m venv` + pip, in a new directory beside the link; the link is then replaced
atomically (rename), all under an exclusive lock, so concurrent first launches make it once and
nothing ever runs a half-made environment. It is made in two stages (docs/design.md, "The
environment in two stages"): the launchers wait for the first only. It is made anew when the
plugin's version, its declared dependencies or its folder change. The plugin folder is
in it as an editable install would put it (a plain path entry, no import hook that every start
would pay for, written directly: link_plugin): the code that runs is always the plugin folder
Claude Code manages, never a stale copy.

The launchers' fast path (docs/design.md, "Launcher fast path"): bin/ imports this file in the
environment's own Python and calls fast(); anything else is the slow path, `run`.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager, suppress

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import IO, Any, TypedDict

    class Wanted(TypedDict):
        """What an environment is made from: the stamp (STAMP) written into it."""

        plugin_version: str
        package_version: str
        dependencies: list[str]
        scripts: dict[str, str]
        root: str
        install: str

# The launchers' fast path (an environment is ready) imports nothing else: every `planner`
# call pays for this file's start-up, so the other modules are imported where they are used.

BOOTSTRAP = os.path.realpath(__file__)
ROOT = os.path.dirname(os.path.dirname(BOOTSTRAP))
STAMP = "planner-env.json"  # what the environment was made from (see wanted())
FAILED = "venv.failed"  # why the last build failed, for the processes that waited for it
KEY = "planner-env.key"  # the plugin files' stat() when STAMP last matched them: the fast check
LOCK_WAIT_S = 900  # longer than any build; a dead holder's lock is released by the kernel
# How the plugin folder is in the environment: a plain path entry (link_plugin), as setuptools'
# compat mode makes (docs/design.md, "Launcher fast path").
COMPAT = "editable_mode=compat"
# Two stages (docs/design.md, "The environment in two stages"): the steps and `plan` need only
# these; the review page's and the companion's packages (starlette, uvicorn, mcp, ...) follow
# in the background, and FULL in the environment says they are in.
FIRST = ("pydantic", "click", "jinja2", "filelock", "orjson")
FULL = "planner-env.full"


class Failure(Exception):
    """The environment cannot be made: what failed, and the command that fixes it."""

    def __init__(self, what: str, fix: str) -> None:
        super().__init__(what)
        self.what, self.fix = what, fix


def data_dir() -> str:
    """Where the environment lives. The shared fallback has one dir per plugin folder, so two
    clones (or worktrees) on one machine never replace each other's environment."""
    for name in ("PLANNER_DATA_DIR", "CLAUDE_PLUGIN_DATA"):
        if os.environ.get(name):
            return os.path.abspath(os.environ[name])
    import zlib

    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.expanduser("~/.local/share")
    folder = f"{os.path.basename(ROOT)}-{zlib.crc32(ROOT.encode()):08x}"
    return os.path.join(base, "planner", folder)


def wanted() -> Wanted:
    """What an environment for this plugin folder is made from; a change means a new one."""
    import json
    import tomllib  # after the version check: 3.11+

    try:
        with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f)["project"]
        with open(os.path.join(ROOT, ".claude-plugin", "plugin.json"), encoding="utf-8") as f:
            plugin_version = json.load(f)["version"]
    except (OSError, ValueError, KeyError) as e:
        raise Failure(
            f"{ROOT} is not a whole planner plugin folder ({type(e).__name__}: {e})",
            "reinstall the plugin",
        ) from None
    return {
        "plugin_version": plugin_version,
        "package_version": project["version"],
        "dependencies": project.get("dependencies", []),
        "scripts": project.get("scripts", {}),
        "root": ROOT,
        "install": COMPAT,  # environments made with the import-hook finder are made anew
    }


def quick_key() -> str:
    """The plugin folder, how it is installed and the stat() of the files wanted() reads:
    unchanged means same."""
    lines = [ROOT, COMPAT]
    for rel in ("pyproject.toml", os.path.join(".claude-plugin", "plugin.json")):
        try:
            st = os.stat(os.path.join(ROOT, rel))
        except OSError:
            return ""  # matches nothing: wanted() then says what is missing
        lines.append(f"{rel} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(lines) + "\n"


def current(data: str) -> str | None:
    """The environment in use if it was made for this plugin folder and still has its Python.

    The files are parsed (wanted()) only when their stat() changed since the last match, e.g.
    after a checkout; a match then refreshes the key.
    """
    env = os.path.join(data, "venv")
    if not os.path.exists(os.path.join(env, "bin", "python")):
        return None
    key = quick_key()
    with suppress(OSError), open(os.path.join(env, KEY), encoding="utf-8") as f:
        if key and f.read() == key:
            return env
    import json

    try:
        with open(os.path.join(env, STAMP), encoding="utf-8") as f:
            if json.load(f) != wanted():
                return None
    except (OSError, ValueError):
        return None
    write_key(env, key)
    return env


def write_key(env: str, key: str) -> None:
    tmp = os.path.join(env, f".{KEY}.{os.getpid()}")
    with suppress(OSError):  # only the fast check is lost: the next launch parses the files again
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(key)
        os.replace(tmp, os.path.join(env, KEY))


def say(prefix: str, message: str) -> None:
    print(f"{prefix}: {message}", file=sys.stderr, flush=True)


@contextmanager
def locked(data: str, prefix: str) -> Iterator[float]:
    import fcntl
    import time

    path = os.path.join(data, "venv.lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:  # a read-only or full data dir, a directory in the way
        try:
            # Inside a sandbox that keeps HOME read-only (Codex) the lock the SessionStart
            # hook's build holds, outside it, can still be waited for: flock needs no write.
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            raise Failure(f"cannot write {path} ({e.strerror})", outside_fix()) from None
    waited = 0.0  # when it began to wait for another process, if it did
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(prefix, "waiting for another process that is creating the Python environment…")
            waited = time.time()
            deadline = time.monotonic() + LOCK_WAIT_S
            while True:
                time.sleep(0.2)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise Failure(
                            f"waited {LOCK_WAIT_S} s for the process holding "
                            f"{data}/venv.lock (see {data}/bootstrap.log)",
                            "stop that process, then run the command again",
                        ) from None
        yield waited
    finally:
        os.close(fd)


def split(dependencies: list[str]) -> tuple[list[str], list[str]]:
    """The declared dependencies of the first stage, and the rest."""
    import re

    first = [d for d in dependencies if re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower() in FIRST]
    return first, [d for d in dependencies if d not in first]


def complete(data: str) -> str | None:
    """The environment in use if both its stages are in."""
    env = current(data)
    return env if env and os.path.exists(os.path.join(env, FULL)) else None


def needs_full(name: str, args: list[str]) -> bool:
    """The commands that import the second stage: the review page and the companion (not
    `plan review show`, the person's view in a terminal)."""
    return name == "plan" and args[:1] in (["mcp"], ["review"]) and args[1:2] != ["show"]


def ensure_full(prefix: str) -> str:
    """The environment with its second stage, installed here if no one has yet."""
    ensure(prefix)
    data = data_dir()
    env = complete(data)
    if env:
        return env
    with locked(data, prefix):
        env = current(data)
        if env is not None:
            full = os.path.exists(os.path.join(env, FULL))
            return env if full else install_second_stage(data, env, prefix)
    # Replaced while we waited (the plugin folder changed): make the new one, with the lock
    # released first: flock belongs to an open file, so taking it again here would wait on
    # ourselves until LOCK_WAIT_S.
    return ensure_full(prefix)


def install_second_stage(data: str, env: str, prefix: str) -> str:
    """The review page's and the companion's packages into `env`, under venv.lock."""
    import time

    started = time.monotonic()
    log_path = os.path.join(data, "bootstrap.log")
    say(prefix, "installing the review page's and the companion's packages…")
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(f"\n== {time.strftime('%Y-%m-%dT%H:%M:%S')} second stage in {env}\n")
        log.flush()
        try:
            install_rest(os.path.realpath(env), log)
        except Failure as e:  # for the processes that wait for it (hooks/mcp_wait.py)
            with open(os.path.join(data, FAILED), "w", encoding="utf-8") as f:
                f.write(f"{e.what}\n{e.fix}\n")
            raise
    with open(os.path.join(env, FULL), "w", encoding="utf-8") as f:
        f.write("\n")
    say(prefix, f"second stage ready ({time.monotonic() - started:.0f} s)")
    return env


def ensure(prefix: str, rebuild: bool = False) -> str:
    """The environment for this plugin folder, made first if it is missing or out of date
    (its first stage: see ensure_full)."""
    data = data_dir()
    env = current(data)
    if env and not rebuild:
        return env
    try:
        os.makedirs(data, exist_ok=True)
    except OSError as e:
        raise Failure(f"cannot create {data} ({e.strerror})", outside_fix()) from None
    with locked(data, prefix) as waited:
        env = current(data)
        if env and not rebuild:  # made by the process we waited for
            return env
        failure = last_failure(data, waited - 1) if waited else None
        if failure:  # the build we waited for failed just now: say why, not fail again slowly
            raise failure
        failed = os.path.join(data, FAILED)
        try:
            try:
                return build(data, wanted(), prefix)
            except OSError as e:  # the data dir itself: full, read-only, a file in the way
                where = e.filename or data
                raise Failure(f"cannot write {where} ({e.strerror})", outside_fix()) from None
        except Failure as e:
            # for the waiters; a full or read-only dir: they then build and fail themselves
            with suppress(OSError), open(failed, "w", encoding="utf-8") as f:
                f.write(f"{e.what}\n{e.fix}\n")
            raise


def outside_fix() -> str:
    """The fix for a data dir the launcher cannot write: the agent's sandbox (Codex keeps HOME
    read-only and has no network) cannot make the environment, a terminal can, once."""
    return (
        f"run once in a terminal, outside the agent's sandbox: python3 {BOOTSTRAP} ensure"
        " (or free the dir, or set PLANNER_DATA_DIR to a writable one)"
    )


def last_failure(data: str, since: float) -> Failure | None:
    """Why a build in `data` failed since a time, as it wrote in venv.failed (None if none
    did); a file that is empty, cut short or unreadable (that process died, or the disk was
    full) says so."""
    failed = os.path.join(data, FAILED)
    if not os.path.exists(failed) or os.path.getmtime(failed) < since:
        return None
    try:
        with open(failed, encoding="utf-8", errors="replace") as f:
            what, fix = [*f.read(4096).split("\n"), "", ""][:2]
    except OSError as e:
        what, fix = f"cannot read {failed} ({e.strerror})", ""
    if not what.strip():
        what = f"the build another process ran failed without saying why ({failed} is empty)"
    log = os.path.join(data, "bootstrap.log")
    return Failure(what, fix.strip() or f"see {log}, then run the command again")


def build(data: str, want: Wanted, prefix: str) -> str:
    import json
    import secrets
    import shutil
    import time

    name = f"venv-{want['plugin_version']}-{secrets.token_hex(4)}"
    env = os.path.join(data, name)
    log_path = os.path.join(data, "bootstrap.log")
    started = time.monotonic()
    say(prefix, f"creating its Python environment in {env} (log: {log_path})…")
    try:
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(f"\n== {time.strftime('%Y-%m-%dT%H:%M:%S')} {env} from {ROOT}\n")
            log.flush()
            install(env, log, prefix)
        with open(os.path.join(env, STAMP), "w", encoding="utf-8") as f:
            json.dump(want, f, indent=1)
        write_key(env, quick_key())
        in_use = os.path.join(data, "venv")
        if os.path.isdir(in_use) and not os.path.islink(in_use):  # made by hand: replace it
            shutil.rmtree(in_use)
        link = os.path.join(data, f".venv-link-{secrets.token_hex(4)}")
        os.symlink(name, link)
        os.replace(link, in_use)  # atomic: the old environment or the new one, never neither
        if os.path.exists(os.path.join(data, FAILED)):
            os.unlink(os.path.join(data, FAILED))
    except BaseException:
        shutil.rmtree(env, ignore_errors=True)
        raise
    for other in os.listdir(data):  # earlier environments and leftovers of killed builds
        if other != name and other.startswith(("venv-", ".venv-link-")):
            path = os.path.join(data, other)
            if os.path.islink(path):
                os.unlink(path)
            else:
                shutil.rmtree(path, ignore_errors=True)
    say(prefix, f"Python environment ready ({time.monotonic() - started:.0f} s)")
    return os.path.join(data, "venv")


def install(env: str, log: IO[str], prefix: str) -> None:
    """A venv at `env` with the dependencies of the first stage and the plugin folder in it
    (link_plugin: what an editable install makes, written directly)."""
    import shutil

    again = rerun("rebuild")
    python = os.path.join(env, "bin", "python")
    first = split(wanted()["dependencies"])[0]
    uv = shutil.which("uv")
    if uv:
        say(prefix, "installing the package and its dependencies with uv…")
        try:
            step("uv venv", [uv, "venv", "--quiet", "--python", sys.executable, env], log, again)
            step("uv pip install", [uv, "pip", "install", "--python", python, *first], log, again)
            link_plugin(env)
            return
        except Failure as e:
            log.write(f"== uv failed ({e.what}); trying python3 -m venv and pip\n")
            shutil.rmtree(env, ignore_errors=True)
    # This Python's own pip serves the venv (`pip --python`): a venv without pip is made in
    # well under a second, ensurepip's copy of pip (and setuptools) takes ~10 s.
    venv = [sys.executable, "-m", "venv", *(["--without-pip"] if host_pip() else []), env]
    try:
        step("python3 -m venv", venv, log, again)
    except Failure as e:
        raise Failure(
            e.what,
            "install the venv module (Debian/Ubuntu: apt-get install python3-venv) or uv, " + again,
        ) from None
    say(prefix, "installing the package and its dependencies with pip…")
    step("pip install", [*pip_install(env), *first], log, again)
    link_plugin(env)


def host_pip() -> bool:
    """Whether this Python has a pip that can install into another environment (22.3+)."""
    import subprocess

    try:
        done = subprocess.run(
            [sys.executable, "-c", "import pip; print(pip.__version__)"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        major, minor = (int(n) for n in done.stdout.split(".")[:2])
    except (OSError, ValueError):
        return False
    return done.returncode == 0 and (major, minor) >= (22, 3)


def pip_install(env: str) -> list[str]:
    """`pip install` into `env`: its own pip if it has one, else this Python's."""
    python = os.path.join(env, "bin", "python")
    own = os.path.exists(os.path.join(env, "bin", "pip"))
    pip = [python, "-m", "pip"] if own else [sys.executable, "-m", "pip", "--python", python]
    return [*pip, "install", "--disable-pip-version-check", "--no-input"]


def link_plugin(env: str) -> None:
    """What `pip install --no-deps -e ROOT` (compat mode) leaves, written directly: a .pth path
    entry to the plugin folder, the dist-info that `--version` reads and the console scripts.
    pip would build it in an isolated environment with setuptools (~10 s) to make these."""
    import json

    want = wanted()
    version, scripts = want["package_version"], want["scripts"]
    site = os.path.join(env, "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}")
    site = os.path.join(site, "site-packages")
    info = os.path.join(site, f"planner-{version}.dist-info")
    os.makedirs(info)
    entry_points = "".join(f"{name} = {entry}\n" for name, entry in scripts.items())
    files = {os.path.join(site, "__editable__.planner.pth"): ROOT + "\n"}
    for name, text in (
        ("METADATA", f"Metadata-Version: 2.1\nName: planner\nVersion: {version}\n"),
        ("INSTALLER", "planner-bootstrap\n"),
        ("direct_url.json", json.dumps({"url": "file://" + ROOT, "dir_info": {"editable": True}})),
        ("entry_points.txt", "[console_scripts]\n" + entry_points),
    ):
        files[os.path.join(info, name)] = text
    for name, entry in scripts.items():
        module, func = entry.split(":")
        files[os.path.join(env, "bin", name)] = (
            f"#!{os.path.join(env, 'bin', 'python')}\nimport sys\n"
            f"from {module} import {func}\nsys.exit({func}())\n"
        )
    record = os.path.join(info, "RECORD")
    files[record] = "".join(f"{os.path.relpath(p, site)},,\n" for p in [*files, record])
    for path, text in files.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        if path.startswith(os.path.join(env, "bin")):
            os.chmod(path, 0o755)


def install_rest(env: str, log: IO[str]) -> None:
    """The second stage: the declared dependencies the first left out."""
    import shutil

    again = rerun("ensure")
    rest = split(wanted()["dependencies"])[1]
    python = os.path.join(env, "bin", "python")
    uv = shutil.which("uv")
    if uv and os.path.exists(os.path.join(env, "pyvenv.cfg")):
        try:
            step("uv pip install", [uv, "pip", "install", "--python", python, *rest], log, again)
            return
        except Failure as e:
            log.write(f"== uv failed ({e.what}); trying pip\n")
    step("pip install", [*pip_install(env), *rest], log, again)


def rerun(command: str) -> str:
    """The end of an install step's fix: this file's `command`, run where it can install."""
    import shlex

    bootstrap = shlex.quote(BOOTSTRAP)
    return f"then run in a terminal (outside the agent's sandbox): python3 {bootstrap} {command}"


def step(what: str, cmd: list[str], log: IO[str], again: str) -> None:
    """Run one install step with its output in the log; a failure names its first error."""
    import shlex
    import subprocess

    log_path = log.name
    log.write("$ " + shlex.join(cmd) + "\n")
    log.flush()
    start = log.tell()
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    except OSError as e:
        raise Failure(f"{what} cannot run ({e.strerror})", again) from None
    if done.returncode != 0:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            f.seek(start)
            lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
        first = [ln for ln in lines if ln.startswith("ERROR:")] or [
            ln for ln in lines if ln.lower().startswith("error")
        ]
        reason = (first or lines or ["no output"])[0][:200]
        raise Failure(
            f"{what} failed (exit {done.returncode}): {reason} (log: {log_path})",
            "check the network or the package index (pip config list), " + again,
        )


def too_old() -> str | None:
    if sys.version_info < (3, 11):  # noqa: UP036 (this file runs on old Pythons to say so)
        return f"needs Python 3.11 or newer (this is {sys.version_info[0]}.{sys.version_info[1]})"
    return None


def interruptible(command: Callable[[str, list[str]], int], launcher: str, args: list[str]) -> int:
    """bin/'s entry: `command` (run or fast) with Ctrl-C as KeyboardInterrupt from here on, and
    a quiet end (130) for it, never a traceback. The launcher ignores SIGINT across its exec
    (Python then installs no handler while it initialises) and restores the default, a quiet
    end, while this file loads."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupts_in_callbacks()
    try:
        return command(launcher, args)
    except KeyboardInterrupt:
        return 130


def interrupts_in_callbacks() -> None:
    """A Ctrl-C that lands while Python runs a callback it cannot raise from (a weakref's, as
    importlib's module locks have) is printed as "Exception ignored" with a traceback, and the
    command goes on. End it there instead, quietly, with 130, as a kill would: every command's
    effect is wholly there or wholly absent after a kill, and the next command finishes or
    discards a killed one. (Raising it again raises it inside this hook.)"""

    def hook(unraisable: Any, default: Callable[[Any], object] = sys.unraisablehook) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            os._exit(130)
        default(unraisable)

    sys.unraisablehook = hook


def run(launcher: str, args: list[str]) -> int:
    """A launcher: exec NAME in the environment (made first if needed)."""
    name = os.path.basename(os.path.realpath(launcher))
    chosen = os.environ.get("PLANNER_PYTHON")
    old = too_old()
    if old:
        fix = "set PLANNER_PYTHON to one" if chosen else "install it, or set PLANNER_PYTHON"
        say(name, f"{old}; {fix}")
        return 2
    try:
        if chosen:  # an interpreter that has the dependencies: run this plugin folder's code
            return run_in(chosen, name, args)
        data = data_dir()
        if name == "plan" and args[:1] == ["mcp"] and complete(data) is None:
            # A client's first session: answer it now, not after the build (hooks/mcp_wait.py).
            sys.path.insert(0, ROOT)
            from hooks import mcp_wait

            return mcp_wait.serve(
                args,
                data,
                lambda: complete(data),
                lambda: start_build(data),
                lambda since: str(last_failure(data, since) or ""),  # its `what`
            )
        if needs_full(name, args):
            env = ensure_full(name)
        else:
            env = ensure(name)
            if complete(data) is None:  # the second stage, in the background
                # a data dir it may not write (Codex's sandbox): a later start makes it
                with suppress(OSError):
                    start_build(data)
    except Failure as e:
        say(name, f"cannot create its Python environment: {e.what}; fix: {e.fix}")
        return 2
    script = os.path.join(env, "bin", name)
    try:
        os.execv(script, [script, *args])
    except OSError as e:
        say(name, f"cannot run {script} ({e.strerror}); fix: python3 {BOOTSTRAP} rebuild")
    return 2


def run_in(python: str, name: str, args: list[str]) -> int:
    """exec NAME in `python` (PLANNER_PYTHON, which has the dependencies) from this plugin
    folder's code."""
    import signal

    module, func = wanted()["scripts"][name].split(":")
    runner = (  # Ctrl-C while it starts: a quiet end, as in bin/ (SIGINT ignored
        # across the exec, the default while it imports, then KeyboardInterrupt)
        "import signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
        "sys.path[0] = sys.argv[1]; sys.argv = sys.argv[2:]\n"
        f"from {module} import {func}\n"
        "try:\n"  # from the handler on: a KeyboardInterrupt anywhere is the quiet end
        " signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        " from hooks.bootstrap import interrupts_in_callbacks; interrupts_in_callbacks()\n"
        f" sys.exit({func}())\n"
        "except KeyboardInterrupt: sys.exit(130)"
    )
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.execvp(python, [python, "-c", runner, ROOT, name, *args])
    except OSError as e:
        signal.signal(signal.SIGINT, before)
        say(name, f"cannot run PLANNER_PYTHON={python} ({e.strerror})")
    return 2


def fast(launcher: str, args: list[str]) -> int:
    """bin/'s fast path, called in `<data>/venv/bin/python -I` with bootstrap imported: if
    that environment is the one in use and matches the plugin folder (current(), the same
    check `run` makes), run the command in this process; else hand over to the slow path.

    A command that cannot even be imported means a damaged environment: one line with the fix.
    """
    name = os.path.basename(os.path.realpath(launcher))
    entry = ""
    with suppress(Exception):  # a damaged stamp, an unreadable plugin folder: `run` judges, says
        env = current(data_dir())
        full = not needs_full(name, args) or (env and os.path.exists(os.path.join(env, FULL)))
        if env and full and os.path.realpath(env) == os.path.realpath(sys.prefix):
            import json

            with open(os.path.join(env, STAMP), encoding="utf-8") as f:
                entry = json.load(f)["scripts"][name]
    if not entry:
        try:
            slow = ["python3", "-S", "-I", BOOTSTRAP, "run", launcher, *args]
            os.execvp("python3", slow)
        except OSError as e:
            say(name, f"cannot run python3 ({e.strerror}); set PLANNER_PYTHON")
            return 2
    module, func = entry.split(":")
    sys.argv = [launcher, *args]
    try:
        import importlib

        command = getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as e:
        if os.environ.get("PLANNER_DEBUG") == "1":
            raise
        detail = " ".join(str(e).split())
        say(
            name,
            f"the Python environment {sys.prefix} cannot run it ({type(e).__name__}: {detail}); "
            f"fix: python3 {BOOTSTRAP} rebuild",
        )
        return 2
    code: int = command()
    return code


def session_start() -> int:
    """SessionStart hook: fail open, never wait; a missing environment is made in the background.

    Claude Code waits for the hook (up to its timeout, then kills its process group), so the
    build runs detached in its own session with its output in the log. The data dir is handed
    to the agent's shell (CLAUDE_ENV_FILE), where Claude Code does not set CLAUDE_PLUGIN_DATA.
    """
    import shlex

    try:
        if os.environ.get("PLANNER_PYTHON"):
            return 0
        if too_old():
            say("planner", f"{too_old()}; the launchers will not run (set PLANNER_PYTHON)")
            return 0
        data = data_dir()
        env_file = os.environ.get("CLAUDE_ENV_FILE")
        if env_file:  # also the fallback dir: a named data dir is what lets bin/ start one Python
            with open(env_file, "a", encoding="utf-8") as f:
                f.write(f"export PLANNER_DATA_DIR={shlex.quote(data)}\n")
        if complete(data):
            return 0
        what = "creating its Python environment"
        if current(data):  # the first stage is in: only the page's and the companion's are made
            what = "installing the review page's and the companion's packages"
        log_path = start_build(data)
        say("planner", f"{what} in the background (log: {log_path})")
    except Failure as e:  # fail open: the first launcher tries again and reports
        say("planner", f"SessionStart did not start the environment build: {e.what}; continuing")
    except Exception as e:
        say("planner", f"SessionStart did not start the environment build ({e!r}); continuing")
    return 0


def start_build(data: str) -> str:
    """Start making the environment in `data` in the background, in a session of its own (a
    hook's or a server's end does not kill it; one already under way is waited for, not
    repeated: `ensure` takes the lock); the log's path."""
    import subprocess

    wanted()  # a plugin folder it cannot read is reported here, not in the log
    os.makedirs(data, exist_ok=True)
    log_path = os.path.join(data, "bootstrap.log")
    with open(log_path, "a", encoding="utf-8") as log:
        subprocess.Popen(
            [sys.executable, "-S", "-I", BOOTSTRAP, "ensure"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env={**os.environ, "PLANNER_DATA_DIR": data},
        )
    return log_path


def main(argv: list[str]) -> int:
    """Every failure is one line and exit 2, never a traceback (the hook fails open: 0)."""
    try:
        return dispatch(argv)
    except KeyboardInterrupt:
        say("planner", "interrupted")
        return 130
    except Exception as e:  # the last line of defence: an OSError, a damaged data dir, a bug
        prog = os.path.basename(argv[1]) if len(argv) >= 2 and argv[0] == "run" else "planner"
        if argv[:1] == ["session-start"]:
            return 0
        detail = " ".join(str(e).split())  # one line, whatever the exception holds
        say(
            prog,
            f"cannot create its Python environment: {type(e).__name__}: {detail}; fix: "
            f"python3 {BOOTSTRAP} rebuild",
        )
        return 2


def dispatch(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "run" and len(argv) >= 2:
        return run(argv[1], argv[2:])
    if command == "session-start":
        return session_start()
    if command in ("ensure", "rebuild", "where"):
        if too_old():
            say("planner", f"{too_old()}; install it, or set PLANNER_PYTHON")
            return 2
        if command == "where":
            print(f"data: {data_dir()}\nvenv: {current(data_dir()) or '(none yet)'}")
            return 0
        try:
            if command == "rebuild":
                ensure("planner", rebuild=True)
            print(ensure_full("planner"))
        except Failure as e:
            say("planner", f"cannot create its Python environment: {e.what}; fix: {e.fix}")
            return 2
        return 0
    say("bootstrap.py", "usage: run NAME [ARGS...] | session-start | ensure | rebuild | where")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
