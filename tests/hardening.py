"""Shared by the hardening tests: run the real entry point (cudadoctor.cli.main, with its one-line
error formatting) in-process, and the properties every bad-input answer must have."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from click.testing import CliRunner

from cudadoctor.cli import main
from cudadoctor.model.text import LINE_LIMIT


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str


def run_main(args: Sequence[str], env: Optional[Mapping[str, Optional[str]]] = None) -> Outcome:
    """cudadoctor's console entry (``main``) in-process: the same code path a user's shell takes
    after the interpreter starts, including how errors are printed."""
    runner = CliRunner()
    with runner.isolation(env=dict(env or {})) as (out, err, _):
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        stdout = out.getvalue().decode("utf-8", "backslashreplace")
        stderr = err.getvalue().decode("utf-8", "backslashreplace")
    return Outcome(code, stdout, stderr)


def assert_one_short_error(outcome: Outcome, what: str = "") -> None:
    """Exit 2 and exactly one line on stderr, within the bound, with no control character in it."""
    assert outcome.exit_code == 2, (what, outcome.exit_code, outcome.stderr[:500])
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1, (what, outcome.stderr[:1000])
    line = lines[0]
    assert line.startswith("cudadoctor: error: "), (what, line)
    assert len(line) <= LINE_LIMIT, (what, len(line), line)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in line), (what, line)
    assert "Traceback" not in outcome.stderr
