"""`fleet --family ngc-pytorch`: the fleet's candidates are NGC months, checked as the target
image on every kind of node (GFD-labelled Kubernetes nodes), and the JSON meets fleet.schema.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from cudadoctor.app.loader import load_table
from fleet_nodes import gfd_labels, node, node_list
from helpers import invoke

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "cudadoctor" / "schemas" / "fleet.schema.json").read_text())
REPO = load_table().ngc_families[0].repository


def cluster() -> dict[str, Any]:
    pools = [("h100-535", "H100", "535.183.01"), ("a100-570", "A100", "570.124.06"),
             ("t4-580", "T4", "580.65.06"), ("v100-580", "V100", "580.65.06"),
             ("rtx4090-570", "RTX4090", "570.124.06")]  # fmt: skip
    nodes = [node(f"{pool}-{i}", gfd_labels(gpu, driver, 8)) for pool, gpu, driver in pools for i in range(2)]
    return node_list(nodes + [node("cpu-0")])


def fleet(tmp_path: Path, *args: str) -> Any:
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(cluster()))
    return invoke("fleet", str(path), "--family", "ngc-pytorch", *args)


def test_fleet_of_the_ngc_family_picks_the_month_running_on_most_nodes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2026-05-01")  # R535 live: forward compatibility on it counts
    run = fleet(tmp_path, "--json")
    doc = run.json()
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["target"]["family"] == "ngc-pytorch"
    candidates = {c["variant"]: c for c in doc["candidates"]}
    assert set(candidates) <= {r.release for r in load_table().ngc_releases}
    answer = doc["fleet_recommendation"]
    assert answer["image"] == f"{REPO}:{answer['variant']}-py3"
    assert answer["hosts"] == max(c["hosts"] for c in doc["candidates"])
    # 25.12 (CUDA 13.1): H100 on R535, A100 on R570 and T4 on R580 through forward compatibility,
    # the RTX 4090 on R570 not (GeForce), and CUDA 13 cannot build for the V100 at all.
    c2512 = candidates["25.12"]
    assert c2512["hosts"] == 6
    left = {name: entry["findings"] for entry in c2512["left_out"] for name in entry["hosts"]}
    assert set(left) == {"v100-580-0", "v100-580-1", "rtx4090-570-0", "rtx4090-570-1"}
    assert "ngc-gpu-unsupported" in left["v100-580-0"]
    # 25.05 (CUDA 12.9, settled by NVIDIA's Triton matrix) runs on every node (23.10 does too, but its CUDA is
    # unverified, and settled months come first among equals): it is the fleet's answer.
    assert answer["variant"] == "25.05" and answer["hosts"] == 10 and answer["left_out"] == []
    groups = {name: g for g in doc["groups"] for name in g["hosts"]}
    assert groups["h100-535-0"]["recommendation"]["support"] == "forward-compat"
    assert groups["h100-535-0"]["recommendation"]["variant"] == "25.12"


def test_fleet_text_header_names_the_ngc_family(tmp_path: Path) -> None:
    run = fleet(tmp_path)
    lines = run.stdout.splitlines()
    assert run.exit_code in (0, 1) and lines[0].startswith("Fleet answer: nvcr.io/nvidia/pytorch:")  # the answer first
    assert "ngc-pytorch" in next(line for line in lines if line.startswith("Fleet: "))


def test_node_affinity_for_an_ngc_target_is_refused_in_one_line(tmp_path: Path) -> None:
    run = fleet(tmp_path, "--format", "node-affinity")
    assert run.exit_code == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and "ngc-pytorch" in run.stderr
