"""Shared helpers for the CLI tests: run cudadoctor in-process (click's runner) or as a user would.

`run_cli` is the one runner of the command as a process (every test file uses it, through a
thin wrapper of its own at most); `start_cli` starts it for the tests that need the process itself
(signals, pipes, concurrent writers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, Union

from click.testing import CliRunner

from cudadoctor.cli import cli

REPO_ROOT = Path(__file__).resolve().parent.parent
HOSTS = Path(__file__).resolve().parent / "hosts"


def host(name: str) -> str:
    return str(HOSTS / f"{name}.json")


@dataclass
class Run:
    exit_code: int
    stdout: Any  # str, or bytes for run_cli(binary=True)
    stderr: Any
    elapsed: float = 0.0  # wall seconds the process took (run_cli)

    @property
    def returncode(self) -> int:  # subprocess's name for it, so a CompletedProcess's readers read a Run too
        return self.exit_code

    def json(self) -> Any:
        return json.loads(self.stdout)

    def codes(self) -> list[str]:
        return [f["code"] for f in self.json()["findings"]]


def invoke(*args: str, env: Optional[dict[str, str]] = None) -> Run:
    """Run the click command in-process; fast, and enough for everything but the entry point."""
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def cli_environment(env: Optional[dict[str, str]] = None, unset: Sequence[str] = ()) -> dict[str, str]:
    """This process's environment without the variables whose names start with one of ``unset``,
    then ``env`` on top."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(tuple(unset))} if unset else dict(os.environ)
    return {**kept, **(env or {})}


def cli_command(args: Sequence[str], exe: Optional[list[str]] = None, user: Optional[str] = None) -> list[str]:
    command = (exe or [sys.executable, "-m", "cudadoctor"]) + list(args)
    if user:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    return command


def run_cli(
    *args: str,
    env: Optional[dict[str, str]] = None,
    cwd: Optional[str] = None,
    exe: Optional[list[str]] = None,
    user: Optional[str] = None,
    timeout: float = 120,
    unset: Sequence[str] = (),
    input: Union[None, str, bytes] = None,
    binary: bool = False,
    environment: Optional[dict[str, str]] = None,
) -> Run:
    """Run `python -m cudadoctor` in a fresh process, as a user's shell would: ``env`` over this
    process's environment less the names starting with ``unset`` (``environment``: exactly that
    environment, nothing inherited); as another ``user`` (a uid, through setpriv with no groups);
    ``input`` on standard input; ``binary``: stdout and stderr as bytes."""
    start = time.monotonic()
    proc = subprocess.run(
        cli_command(args, exe, user), capture_output=True, text=not binary,
        env=environment if environment is not None else cli_environment(env, unset),
        cwd=cwd or REPO_ROOT, timeout=timeout, input=input,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def start_cli(*args: str, env: Optional[dict[str, str]] = None, unset: Sequence[str] = (), **popen: Any) -> "subprocess.Popen[Any]":
    """`python -m cudadoctor ARGS` started and left running, for a test that needs the process
    itself (a signal, a pipe it writes into, concurrent writers): ``popen`` are Popen's arguments."""
    popen.setdefault("cwd", REPO_ROOT)
    return subprocess.Popen(cli_command(args), env=cli_environment(env, unset), **popen)


def core_check(facts, table=None, image_facts=None, only=None, **request_values: Any):
    """The pure entry point, as the fleet and the Python API call it: ``only`` names the checks to
    run (all of them by default); ``request_values`` are resolve_request's (torch=, image=, ...)."""
    from cudadoctor.app.loader import load_table
    from cudadoctor.doctor import check, resolve_request
    from cudadoctor.rules import CHECKS

    table = table or load_table()
    checks = CHECKS if only is None else tuple(c for c in CHECKS if c.name in set(only))
    assert only is None or len(checks) == len(set(only)), f"unknown check in {only}"
    return check(facts, table, resolve_request(table, **request_values), image=image_facts, checks=checks)


def wait_for(condition: Callable[[], Any], limit: float = 60.0) -> bool:
    """Poll until ``condition()`` holds (a bound against a broken test, not a speed claim)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def signal_and_wait(proc: "subprocess.Popen[Any]", signum: int, timeout: float = 60) -> Any:
    """Send ``signum`` to a running command and wait for it to end (killed if it does not); its stderr."""
    try:
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return err
