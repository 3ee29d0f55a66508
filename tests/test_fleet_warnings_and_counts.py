"""Fleet warnings print node names, file names and label values with every control character
escaped (a node named with an OSC sequence cannot set the terminal's title, a newline in a file
name cannot split a warning), and a GPU count label is capped at what NVML can report."""

from __future__ import annotations

import json

import pytest

from fleet_nodes import gfd_labels, node, node_list
from helpers import run_cli

OSC_NAME = "evil\x1b]0;pwned\x07"


def _controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) < 0xA0]


def test_a_node_named_with_an_osc_sequence_is_escaped_in_the_warning(tmp_path) -> None:
    bad = node(OSC_NAME, {**gfd_labels("A100", "550.54.15"), "nvidia.com/gpu.count": "1000000"})
    good = node("gpu-1", gfd_labels("A100", "550.54.15"))
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(node_list([bad, good])))
    proc = run_cli("fleet", str(path), timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, proc.stderr
    assert _controls(proc.stderr) == [] and _controls(proc.stdout) == []
    assert "evil\\x1b]0;pwned\\x07" in warnings[0]
    assert "nvidia.com/gpu.count=1000000" in warnings[0] and "64" in warnings[0]


def test_a_newline_in_a_file_name_does_not_split_a_warning(tmp_path) -> None:
    directory = tmp_path / "fleet"
    directory.mkdir()
    (directory / "ok.json").write_text(json.dumps(node_list([node("gpu-1", gfd_labels("A100", "550.54.15"))])))
    (directory / "bad\nname\x1b[31m.json").write_text("{not json")
    proc = run_cli("fleet", str(directory), timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "warning" in lines[0], proc.stderr
    assert "bad\\nname\\x1b[31m.json" in lines[0]
    assert _controls(proc.stderr) == []


@pytest.mark.parametrize("count, accepted", [("64", True), ("65", False), ("1000000", False), ("٣", False), ("1_0", False)])
def test_gpu_count_labels_are_capped_at_what_nvml_reports(count: str, accepted: bool) -> None:
    from cudadoctor.fleet.gfd import LabelError, facts_from_labels

    labels = {**gfd_labels("A100", "550.54.15"), "nvidia.com/gpu.count": count}
    if accepted:
        assert len(facts_from_labels(labels).gpus) == int(count)
    else:
        with pytest.raises(LabelError, match="nvidia.com/gpu.count"):
            facts_from_labels(labels)


def test_mig_counts_are_capped_too() -> None:
    from cudadoctor.fleet.gfd import LabelError, facts_from_labels

    labels = {**gfd_labels("A100", "550.54.15"), "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-1g.10gb.count": "999999"}
    with pytest.raises(LabelError, match="mig-1g.10gb.count"):
        facts_from_labels(labels)


@pytest.mark.parametrize("name, shown", [("ad\rmin", "ad\\rmin"), ("ad\b\amin", "ad\\x08\\x07min"), (OSC_NAME, "evil\\x1b]0;pwned\\x07")])
def test_a_node_name_with_control_characters_is_shown_escaped_in_the_report_not_dropped(tmp_path, name: str, shown: str) -> None:
    # Dropped (as the report library drops BEL, BS and CR) or read as a space, "ad\rmin" would show
    # as a node named "admin" or "ad min": two nodes that look alike must not be shown alike.
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(node_list([node(name, gfd_labels("A100", "550.54.15"))])))
    proc = run_cli("fleet", str(path), timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    assert _controls(proc.stdout) == []
    assert shown in proc.stdout
