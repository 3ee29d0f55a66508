"""Output on streams that are not UTF-8 (issue 12, item 3), through real processes.

``LC_ALL=C`` alone puts Python 3.7+ in UTF-8 mode (PEP 540), so the stream stays UTF-8; with
``PYTHONUTF8=0`` beside it, or ``PYTHONIOENCODING=latin-1``/``ascii``, the stream really cannot
encode the report's marks, and the report must degrade to ASCII instead of failing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import REPO_ROOT, Run, host, run_cli

ENCODINGS = {
    "LC_ALL=C": {"LC_ALL": "C"},
    "LC_ALL=C PYTHONUTF8=0": {"LC_ALL": "C", "PYTHONUTF8": "0"},
    "latin-1": {"PYTHONIOENCODING": "latin-1"},
    "ascii": {"PYTHONIOENCODING": "ascii"},
}


def run(args: list[str], extra: dict[str, str]) -> Run:
    return run_cli(*args, env=extra, unset=("LC_", "LANG", "PYTHONIOENCODING", "PYTHONUTF8"), binary=True)


def ascii_only(data: bytes) -> bool:
    return all(b < 128 for b in data)


@pytest.mark.parametrize("name", sorted(ENCODINGS))
def test_check_report_degrades_to_ascii(name: str) -> None:
    # -v: the passing checks too, so every mark (ok, info, warn) and the hint arrow are printed.
    proc = run(["check", "-v", "--torch", "2.11", "--snapshot", host("h100-550")], ENCODINGS[name])
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stderr == b""
    out = proc.stdout.decode("utf-8")
    assert out.splitlines()[0].startswith(("OK", "FAIL")) and "Checked: " in out
    if name != "LC_ALL=C":  # not UTF-8: nothing but ASCII, and the ASCII symbols
        assert ascii_only(proc.stdout), [c for c in out if ord(c) > 127][:5]
        assert "  OK " in out and "->" in out


def test_a_utf8_stream_keeps_the_unicode_symbols() -> None:
    proc = run(["check", "-v", "--torch", "2.11", "--snapshot", host("h100-550")], {"PYTHONIOENCODING": "utf-8"})
    out = proc.stdout.decode("utf-8")
    assert "✓" in out and "→" in out


@pytest.mark.parametrize("name", ["LC_ALL=C PYTHONUTF8=0", "latin-1", "ascii"])
def test_text_from_the_host_that_the_stream_cannot_encode(tmp_path: Path, name: str) -> None:
    data = json.loads(Path(host("h100-550")).read_text())
    data["host"]["gpus"][0]["name"] = "NVIDIA H100 — ünïcode ✓ 漢字 \x1b[31m"
    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps(data))
    proc = run(["check", "-v", "--snapshot", str(snapshot)], ENCODINGS[name])  # -v: the GPU's own line
    assert proc.returncode in (0, 1), proc.stderr
    assert b"\x1b" not in proc.stdout  # the escape sequence is shown escaped, never sent
    assert b"\\x1b" in proc.stdout
    if name != "latin-1":
        assert ascii_only(proc.stdout)


@pytest.mark.parametrize("name", ["LC_ALL=C PYTHONUTF8=0", "ascii"])
def test_json_and_errors_on_an_ascii_stream(name: str) -> None:
    proc = run(["check", "--snapshot", host("h100-550"), "--json"], ENCODINGS[name])
    assert proc.returncode in (0, 1)
    assert ascii_only(proc.stdout)
    json.loads(proc.stdout)
    bad = run(["check", "--snapshot", host("h100-550"), "--driver", "５３５—\n"], ENCODINGS[name])
    assert bad.returncode == 2
    assert ascii_only(bad.stderr)
    assert len(bad.stderr.splitlines()) == 1


@pytest.mark.parametrize("args", [["table"], ["table", "--gpus"], ["table", "--torch", "2.5"], ["recommend", "--snapshot", host("k80-470")], ["check", "--help"],
                                  ["fleet", str(REPO_ROOT / "tests" / "hosts")], ["recommend", "--snapshot", host("t4-470")]])
def test_other_views_on_an_ascii_stream(args: list[str]) -> None:
    proc = run(args, ENCODINGS["ascii"])
    assert proc.returncode in (0, 1), proc.stderr
    assert ascii_only(proc.stdout) and ascii_only(proc.stderr)


def test_the_symbol_tables_name_the_same_symbols() -> None:
    from cudadoctor.report.console import ASCII_SYMBOLS, UNICODE_SYMBOLS

    assert set(ASCII_SYMBOLS) == set(UNICODE_SYMBOLS)
    assert all(ascii_only(v.encode()) for v in ASCII_SYMBOLS.values())



@pytest.mark.parametrize(
    "closed, args, status",
    [
        ("1", ["check", "--json", "--driver", "550.54.15", "--gpu", "H100"], 0),
        ("1", ["check", "--driver", "418.39", "--gpu", "V100", "--torch", "2.15"], 1),
        ("1", ["fleet", str(REPO_ROOT / "tests" / "hosts")], 1),
        ("2", ["check", "--driver", "xx", "--gpu", "H100"], 2),
    ],
)
def test_a_closed_standard_stream_loses_the_output_but_keeps_the_exit_status(closed: str, args: list[str], status: int) -> None:
    """Started with stdout (or stderr) closed, Python's stream is None: the report goes nowhere,
    and the exit status is still the verdict, not an internal error."""
    import shlex
    import subprocess
    import sys

    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "cudadoctor", *args])
    proc = subprocess.run(["sh", "-c", f"exec {closed}>&-; exec {command}"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == status, proc
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200e", "\u200f", "\u061c", "\u200b", "\u200d", "\u00ad", "\ufeff", "\x1b", "\x9b"])
def test_invisible_and_reordering_characters_in_outside_values_are_shown_escaped(char: str) -> None:
    # Two node names that look the same on a terminal or in the fleet page must not be the same text
    # shown twice: every character that is invisible or reorders what follows is written as an escape.
    from cudadoctor.model.text import escape_control, printable

    for show in (escape_control, printable):
        shown = show(f"gpu{char}node")
        assert char not in shown and shown.startswith("gpu\\") and shown.endswith("node")


def test_every_character_escaped_is_one_that_isprintable_refuses() -> None:
    """escape_control and printable leave a text that str.isprintable accepts as it is, without
    their pattern: that is right only while every character their classes escape is refused."""
    import re

    from cudadoctor.model import text

    for chars in (text._UNSAFE_CLASS, text._UNSAFE_IN_TEXT_CLASS):
        pattern = re.compile(f"[{chars}]")
        escaped = [chr(code) for code in range(0x110000) if pattern.match(chr(code))]
        assert len(escaped) > 2000  # the surrogates alone are 2048
        assert [char for char in escaped if char.isprintable()] == []
    assert text.escape_control("driver 550.54.15 \u00e9") == "driver 550.54.15 \u00e9"
    assert text.escape_control("a\nb\u202e") == "a\\nb\\u202e"
    assert text.printable("a\nb\tc\u200b") == "a\nb\tc\\u200b"
