"""Shared helpers for the CLI tests: run cudadoctor in-process (click's runner) or as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from click.testing import CliRunner

from cudadoctor.cli import cli

REPO_ROOT = Path(__file__).resolve().parent.parent
HOSTS = Path(__file__).resolve().parent / "hosts"


def host(name: str) -> str:
    return str(HOSTS / f"{name}.json")


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def codes(self) -> list[str]:
        return [f["code"] for f in self.json()["findings"]]


def invoke(*args: str, env: Optional[dict[str, str]] = None) -> Run:
    """Run the click command in-process; fast, and enough for everything but the entry point."""
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def run_cli(
    *args: str,
    env: Optional[dict[str, str]] = None,
    cwd: Optional[str] = None,
    exe: Optional[list[str]] = None,
    user: Optional[str] = None,
    timeout: float = 120,
) -> Run:
    """Run `python -m cudadoctor` in a fresh process, as a user's shell would (as another ``user``,
    a uid, through setpriv with no groups)."""
    command = (exe or [sys.executable, "-m", "cudadoctor"]) + list(args)
    if user:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(command, capture_output=True, text=True, env=full_env, cwd=cwd or REPO_ROOT, timeout=timeout)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def core_check(facts, table=None, image_facts=None, only=None, **request_values: Any):
    """The pure entry point, as the fleet and the Python API call it: ``only`` names the checks to
    run (all of them by default); ``request_values`` are resolve_request's (torch=, image=, ...)."""
    from cudadoctor.doctor import check, resolve_request
    from cudadoctor.app.loader import load_table
    from cudadoctor.rules import CHECKS

    table = table or load_table()
    checks = CHECKS if only is None else tuple(c for c in CHECKS if c.name in set(only))
    assert only is None or len(checks) == len(set(only)), f"unknown check in {only}"
    return check(facts, table, resolve_request(table, **request_values), image=image_facts, checks=checks)
