"""Any width: through a real pseudo-terminal at 60, 80, 120 and 200 columns, no line is wider than
the terminal except a whole command, and every command is one line (copyable as it is)."""

from __future__ import annotations

import re

import pytest

from helpers import host
from terminal import run_on_terminal

WIDTHS = (60, 80, 120, 200)
COMMAND = re.compile(r"^\s*(pip install|docker |sudo |apt-get )")
URL_ALONE = re.compile(r"^\s*https?://\S+$")  # a link to copy, like a command, is never broken

VIEWS = {
    "check-t4-470": ["check", "--snapshot", host("t4-470")],
    "check-k80-470-verbose": ["check", "-v", "--snapshot", host("k80-470")],
    "check-h100-550": ["check", "--snapshot", host("h100-550")],
    "check-no-driver": ["check", "--snapshot", host("no-driver")],
    "check-image-what-if": ["check", "--driver", "535.104.05", "--gpu", "T4", "--image", "pytorch-cuda:v2.11-cu130"],
    "recommend-wheel": ["recommend", "--wheel", "--snapshot", host("h100-550")],
    "recommend-image": ["recommend", "--image", "--snapshot", host("rtx4090-550")],
    "recommend-no-fit": ["recommend", "--wheel", "--snapshot", host("k80-470")],
    "table": ["table"],
    "table-torch": ["table", "--torch", "2.9"],
    "table-gpus": ["table", "--gpus"],
    "table-gpu": ["table", "--gpu", "T4"],
    "table-sources": ["table", "--sources"],
}


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_lines_fit_the_terminal_and_commands_stay_whole(view: str, columns: int) -> None:
    status, text = run_on_terminal(VIEWS[view], columns)
    assert status in (0, 1), text
    lines = text.rstrip("\n").split("\n")
    assert len(lines) > 1
    for line in lines:
        if COMMAND.match(line) or URL_ALONE.match(line):
            continue  # a command (or a lone URL) is printed whole, however wide
        assert len(line.rstrip()) <= columns, f"{len(line)} > {columns}: {line!r}"
    for line in lines:
        if re.search(r"--index-url https?:", line):
            assert COMMAND.match(line), f"a pip command that does not start its line: {line!r}"
            assert re.search(r"--index-url https?://\S+$", line.rstrip()), f"a pip command cut short: {line!r}"


@pytest.mark.parametrize("columns", (60, 80))
def test_a_finding_code_stays_on_its_line_and_details_hang_under_it(columns: int) -> None:
    _, text = run_on_terminal(["check", "--snapshot", host("t4-470")], columns)
    lines = text.split("\n")
    marked = [i for i, line in enumerate(lines) if line.lstrip().startswith(("✗", "x "))]
    assert marked, text
    for line in lines:
        assert line.strip() != "driver-too-old", "a finding code on a line of its own"
    # The finding's title, detail and hint: continuation lines keep their indent (never column 0).
    start = marked[0]
    block = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        block.append(line)
    assert block and all(line.startswith("    ") for line in block), block


def test_the_answer_comes_first_at_80_columns() -> None:
    _, text = run_on_terminal(["check", "--snapshot", host("t4-470")], 80)
    first = text.split("\n")[:6]
    assert first[0].startswith("FAIL"), first
    assert any("PyTorch 2.7" in line and "pytorch-cuda:v2.7-cu118" in line for line in first), first
    assert any(line.strip().startswith("pip install 'torch==2.7.*' --index-url") for line in first), first


def test_piped_output_keeps_each_line_whole() -> None:
    from helpers import run_cli

    run = run_cli("check", "--torch", "2.11", "--snapshot", host("h100-550"), env={"COLUMNS": "40"})  # 2.11: a minor-compat warning
    detail = [line for line in run.stdout.splitlines() if "JIT-compiled" in line]
    assert detail and len(detail[0]) > 120  # not a terminal: no wrapping, one line per fact
