"""Any width: through a real pseudo-terminal at 60, 80, 120 and 200 columns, no line is wider than
the terminal except a whole command, and every command is one line (copyable as it is)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fleet_nodes import mixed_cluster
from helpers import host
from terminal import run_on_terminal

WIDTHS = (60, 80, 120, 200)
COMMAND = re.compile(r"^\s*(pip install|docker |sudo |apt-get )|^cudadoctor ")  # a help example too, alone at column 0
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
    "help-check": ["check", "--help"],
    "help-scan": ["scan", "--help"],
    "table": ["table"],
    "table-torch": ["table", "--torch", "2.9"],
    "table-gpus": ["table", "--gpus"],
    "table-gpu": ["table", "--gpu", "T4"],
    "table-sources": ["table", "--sources"],
    # NODES: a GFD-labelled node list written for the test (long GPU names, fixes, left-out hosts).
    "fleet-nodes": ["fleet", "NODES", "--torch", "2.11"],
    "fleet-nodes-and-snapshots": ["fleet", "NODES", host("t4-470"), host("k80-470"), host("v100-h100-550")],
}


def _view(name: str, tmp_path: Path) -> list[str]:
    args = VIEWS[name]
    if "NODES" in args:
        nodes = tmp_path / "nodes.json"
        nodes.write_text(json.dumps(mixed_cluster(per_pool=7)))
        args = [str(nodes) if a == "NODES" else a for a in args]
    return args


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_lines_fit_the_terminal_and_commands_stay_whole(view: str, columns: int, tmp_path: Path) -> None:
    status, text = run_on_terminal(_view(view, tmp_path), columns)
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
    _, text = run_on_terminal(["check", "--snapshot", host("t4-470"), "--torch", "2.11"], columns)
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
    _, text = run_on_terminal(["check", "--snapshot", host("t4-470"), "--torch", "2.11"], 80)
    first = text.split("\n")[:6]
    assert first[0].startswith("FAIL"), first
    assert any("PyTorch 2.7" in line and "pytorch/pytorch:2.7.1-cuda11.8-cudnn9-runtime" in line for line in first), first
    assert any(line.strip().startswith("pip install 'torch==2.7.*' --index-url") for line in first), first


@pytest.mark.parametrize("columns", (60, 80))
def test_fleet_group_lines_hang_under_their_text(columns: int, tmp_path: Path) -> None:
    """A group's head line and its details wrap onto indented lines, never column 0."""
    _, text = run_on_terminal(_view("fleet-nodes", tmp_path), columns)
    lines = text.rstrip("\n").split("\n")
    first = next(i for i, line in enumerate(lines) if line.startswith("["))
    block = lines[first : lines.index("", first) if "" in lines[first:] else len(lines)]
    assert all(line.startswith(("[", "    ")) for line in block), block
    assert any(line.startswith("      ") for line in block), "nothing wrapped: the view does not exercise the layout"


def test_piped_fleet_output_keeps_each_line_whole(tmp_path: Path) -> None:
    from helpers import run_cli

    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps(mixed_cluster(per_pool=7)))
    run = run_cli("fleet", str(nodes), "--torch", "2.11", env={"COLUMNS": "40"})
    assert run.exit_code == 1
    assert max(len(line) for line in run.stdout.splitlines()) > 80  # not a terminal: no wrapping


def test_piped_output_keeps_each_line_whole() -> None:
    from helpers import run_cli

    run = run_cli("check", "--torch", "2.11", "--snapshot", host("h100-550"), env={"COLUMNS": "40"})  # 2.11: a minor-compat warning
    detail = [line for line in run.stdout.splitlines() if "JIT-compiled" in line]
    assert detail and len(detail[0]) > 120  # not a terminal: no wrapping, one line per fact
