"""`fleet --matrix` (every release on every group of hosts, and the newest release every host able
to run PyTorch runs) and `fleet --plan` (the driver each failing group needs for a release), on the
shipped snapshots and on GFD node lists, cross-checked against `fleet --torch X.Y` itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cudadoctor.fleet.judge import judge_fleet
from fleet_nodes import gfd_labels, mixed_cluster, node, node_list
from helpers import HOSTS, invoke

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "cudadoctor" / "schemas" / "fleet.schema.json").read_text())


def fleet_json(*args: str) -> dict[str, Any]:
    run = invoke("fleet", *args, "--json")
    assert run.exit_code in (0, 1), run.stderr
    doc = run.json()
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    return doc


def hosts_dir(tmp_path: Path, without: tuple[str, ...] = ()) -> str:
    target = tmp_path / "hosts"
    target.mkdir()
    for path in HOSTS.glob("*.json"):
        if path.stem not in without:
            shutil.copy(path, target / path.name)
    return str(target)


def cluster_file(tmp_path: Path, pools: list[tuple[str, str, str, int]]) -> str:
    """A node list of pools (name, GPU, driver, nodes)."""
    nodes = [node(f"{pool}-{i}", gfd_labels(gpu, driver, 1)) for pool, gpu, driver, count in pools for i in range(count)]
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(node_list(nodes)))
    return str(path)


def group_of(matrix: dict[str, Any], host: str) -> int:
    return next(i for i, g in enumerate(matrix["groups"]) if host in g["hosts"])


# --- the coverage matrix ------------------------------------------------------------------------


def test_matrix_on_the_shipped_snapshots_names_the_hosts_that_run_no_release_and_why():
    matrix = fleet_json(str(HOSTS), "--matrix")["matrix"]
    reasons = {entry["hosts"][0]: entry["reason"] for entry in matrix["runs_none"]}
    assert reasons == {"driver-mismatch": "broken-driver", "no-driver": "no-driver", "no-gpu-550": "no-gpu"}
    assert matrix["judged"] == 12 and matrix["able"] == 9
    # The K80 runs nothing past 2.5 and the RTX 5090 nothing before 2.7: no release runs on all nine.
    assert matrix["every"] is None
    spans = {g["hosts"][0]: (g["oldest"], g["newest"]) for g in matrix["groups"]}
    assert spans["k80-470"][1] == "2.5" and spans["rtx5090-570"][0] == "2.7"
    assert matrix["most"] == "2.7" and matrix["most_hosts"] == 8
    assert [matrix["groups"][int(g[1:]) - 1]["hosts"] for g in matrix["left_out"]] == [["k80-470"]]


def changed_snapshot(tmp_path: Path, name: str, source: str, driver: dict[str, str] | None = None,
                     gpu: dict[str, str] | None = None) -> str:
    data = json.loads((HOSTS / f"{source}.json").read_text())
    data["host"]["hostname"] = name
    data["host"]["driver"].update(driver or {})
    for each in data["host"]["gpus"]:
        each.update(gpu or {})
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_matrix_tells_a_gpu_no_build_covers_from_a_driver_too_old_for_every_build(tmp_path: Path):
    k10 = changed_snapshot(tmp_path, "k10", "k80-470", gpu={"name": "Tesla K10", "compute_capability": "3.0"})
    old_driver = {"driver_version": "418.87.01", "cuda_driver_version": "10.1", "nvml_version": "10.418.87.01"}
    h100 = changed_snapshot(tmp_path, "h100-418", "h100-550", driver=old_driver)
    matrix = fleet_json(k10, h100, "--matrix")["matrix"]
    by_host = {entry["hosts"][0]: entry for entry in matrix["runs_none"]}
    assert by_host["k10"]["reason"] == "gpu-too-old"
    assert by_host["h100-418"]["reason"] == "driver-too-old"
    assert by_host["h100-418"]["detail"] == "upgrade the NVIDIA driver to >= 450.80.02 to run PyTorch 2.7 cu118"
    assert matrix["able"] == 0 and matrix["every"] is None and matrix["most"] is None


def test_matrix_names_the_newest_release_every_able_host_runs(tmp_path: Path):
    matrix = fleet_json(hosts_dir(tmp_path, without=("rtx5090-570",)), "--matrix")["matrix"]
    assert matrix["every"] == "2.5" and matrix["able"] == 8
    row = next(r for r in matrix["releases"] if r["torch"] == "2.5")
    assert row["ok"] + row["warn"] == 8 and row["fail"] == 3  # the three that run no release
    newer = next(r for r in matrix["releases"] if r["torch"] == "2.6")
    assert newer["ok"] + newer["warn"] < 8


def test_matrix_rows_run_from_the_newest_release_to_the_oldest_any_host_runs():
    doc = fleet_json(str(HOSTS), "--matrix")
    releases = [r["torch"] for r in doc["matrix"]["releases"]]
    assert releases[0] == "2.15" and releases[-1] == "1.0"
    # Only H100s: nothing before the first release with sm_90 code is a row.
    h100 = fleet_json(str(HOSTS / "h100-550.json"), "--matrix")["matrix"]
    assert h100["releases"][-1]["torch"] == h100["groups"][0]["oldest"] == "2.0"
    assert h100["releases"][-1]["ok"] + h100["releases"][-1]["warn"] == 1


@pytest.mark.parametrize("torch", ["2.15", "2.14", "2.7", "1.12"])
def test_each_matrix_row_is_what_fleet_says_for_that_release(torch: str):
    matrix = fleet_json(str(HOSTS), "--matrix")["matrix"]
    row = next(r for r in matrix["releases"] if r["torch"] == torch)
    pinned = fleet_json(str(HOSTS), "--torch", torch)
    assert {k: row[k] for k in ("ok", "warn", "fail")} == {k: pinned["summary"][k] for k in ("ok", "warn", "fail")}
    for group in pinned["groups"]:
        cell = row["cells"][group_of(matrix, group["hosts"][0])]
        assert cell["verdict"] == group["verdict"]
        if group["verdict"] != "fail":
            assert cell["variant"] == group["recommendation"]["variant"]


@pytest.mark.parametrize("source", ["snapshots", "node list"])
def test_every_cell_of_the_matrix_is_the_checks_verdict_for_that_release(source: str, tmp_path: Path):
    """The matrix skips the check where no build can run; every cell must still be what the check says."""
    from cudadoctor.app.loader import load_table
    from cudadoctor.doctor import resolve_request
    from cudadoctor.fleet.matrix import coverage_matrix
    from cudadoctor.fleet.sources import SnapshotCache, decode_source, hosts_in

    if source == "snapshots":
        paths = sorted(str(p) for p in HOSTS.glob("*.json"))
    else:
        path = tmp_path / "nodes.json"
        path.write_text(json.dumps(mixed_cluster(per_pool=1, cpu_nodes=1)))
        paths = [str(path)]
    cache = SnapshotCache()
    hosts = [h for p in paths for h in hosts_in(decode_source(Path(p).read_text(), p), p, Path(p).stem, cache)]
    table = load_table()
    fleet = judge_fleet(hosts, table, resolve_request(table))
    matrix = coverage_matrix(fleet, table, every_release=True)
    assert len(matrix.rows) == len(table.pytorch_releases)
    for row in matrix.rows:
        pinned = judge_fleet(hosts, table, resolve_request(table, torch=row.torch))
        verdicts = {g.names: (g.verdict, g.result.recommendation.variant if g.result and g.verdict != "fail" else None)
                    for g in pinned.groups if g.result is not None}
        assert {g.names: (c.verdict, c.variant) for g, c in zip(matrix.groups, row.cells)} == verdicts, row.torch


def test_matrix_text_says_the_answer_first_and_names_every_group():
    run = invoke("fleet", str(HOSTS), "--matrix")
    assert run.exit_code == 1  # the fleet's own verdict: some hosts fail
    lines = run.stdout.splitlines()
    assert lines[0] == "Every host: no release runs on all 9 hosts able to run PyTorch"
    assert lines[1].startswith("Most hosts: PyTorch 2.7 runs on 8 of 12 judged hosts")
    assert any(line.startswith("  PyTorch 2.7 leaves out k80-470") and "runs PyTorch 1.0 to 2.5" in line for line in lines)
    assert any(line.startswith("  broken-driver: driver-mismatch") for line in lines)
    assert any(line.startswith("  no-driver: no-driver") for line in lines)
    header = next(line for line in lines if line.startswith("release"))
    assert header.split()[:4] == ["release", "ok", "warn", "fail"] and header.split()[-1] == "G12"
    row = next(line for line in lines if line.startswith("2.14 "))
    assert row.split()[1:4] == ["1", "5", "6"]
    for name in (p.stem for p in HOSTS.glob("*.json")):
        assert any(line.startswith("  G") and line.endswith(name) for line in lines), name


def test_a_fleet_without_gpu_facts_has_nothing_to_tabulate_or_plan(tmp_path: Path):
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps(node_list([node("cpu-0"), node("cpu-1")])))
    doc = fleet_json(str(path), "--matrix", "--plan")
    assert doc["matrix"]["releases"] == [] and doc["matrix"]["unjudged"] == 2 and doc["matrix"]["every"] is None
    assert doc["plan"]["judged"] == 0 and doc["plan"]["steps"] == [] and doc["plan"]["never"] == []
    run = invoke("fleet", str(path), "--matrix", "--plan")
    assert run.exit_code == 0
    assert run.stdout.splitlines()[:2] == ["Every host: no host runs any release the table knows",
                                           "Not judged: 2 hosts whose sources carry no GPU facts"]
    assert "nothing to plan: no host carries GPU facts" in run.stdout
    assert not [line for line in run.stdout.splitlines() if line.startswith("release")]  # no empty table


def test_matrix_and_plan_refuse_a_fixed_build_in_one_line():
    for flag in ("--matrix", "--plan"):
        run = invoke("fleet", str(HOSTS), flag, "--variant", "cu126")
        assert run.exit_code == 2 and "drop --image and --variant" in run.stderr
        assert "Traceback" not in run.stderr
    run = invoke("fleet", str(HOSTS), "--plan", "--format", "node-affinity")
    assert run.exit_code == 2 and "drop --format node-affinity" in run.stderr
    run = invoke("fleet", str(HOSTS), "--matrix", "--family", "ngc-pytorch")
    assert run.exit_code == 2 and len(run.stderr.strip().splitlines()) == 1 and "NGC" in run.stderr


# --- the upgrade plan ---------------------------------------------------------------------------


def test_plan_for_the_newest_release_names_the_driver_each_failing_group_needs():
    plan = fleet_json(str(HOSTS), "--plan")["plan"]
    assert plan["torch"] == "2.15" and plan["running"] == 0
    (step,) = plan["steps"]
    assert step["branch"] == "R580" and step["min_driver"] == "580.65.06" and step["variant"] == "cu132"
    assert sorted(h for g in step["groups"] for h in g["hosts"]) == [
        "a100-525", "h100-535", "h100-550", "rtx4090-550", "rtx5090-570", "t4-470"]
    assert step["hosts"] == 6 and plan["reachable"] == 6
    never = {n["hosts"][0]: n["reason"] for n in plan["never"]}
    # No CUDA 13 build carries code for Kepler, Pascal or Volta: no driver brings those in.
    assert never == {"driver-mismatch": "broken-driver", "gtx1080ti-580": "gpu-not-built", "k80-470": "gpu-not-built",
                     "no-driver": "no-driver", "no-gpu-550": "no-gpu", "v100-h100-550": "gpu-not-built"}
    assert "sm_70" in next(n["detail"] for n in plan["never"] if n["hosts"] == ["v100-h100-550"])


def test_plan_steps_are_ordered_by_the_hosts_each_brings_in(tmp_path: Path):
    few_v100 = cluster_file(tmp_path, [("v100", "V100", "470.256.02", 2), ("b200ish", "RTX5090", "560.35.03", 5),
                                       ("h100", "H100", "580.95.05", 1)])
    plan = fleet_json(few_v100, "--plan", "--torch", "2.14")["plan"]
    assert [(s["branch"], s["hosts"], s["running"]) for s in plan["steps"]] == [("R580", 5, 6), ("R525", 2, 8)]
    # The V100 gets the CUDA 12 build's floor, never a CUDA 13 build it has no code for.
    assert plan["steps"][1]["variant"] == "cu126"
    many_v100 = cluster_file(tmp_path, [("v100", "V100", "470.256.02", 6), ("b200ish", "RTX5090", "560.35.03", 1)])
    plan = fleet_json(many_v100, "--plan", "--torch", "2.14")["plan"]
    assert [(s["branch"], s["hosts"]) for s in plan["steps"]] == [("R525", 6), ("R580", 1)]
    # Each step is what `fleet --torch` then says: the upgraded pool runs it.
    upgraded = cluster_file(tmp_path, [("v100", "V100", plan["steps"][0]["min_driver"], 6), ("b200ish", "RTX5090", "560.35.03", 1)])
    assert fleet_json(upgraded, "--torch", "2.14")["summary"]["fail"] == 1


def test_a_k80_is_planned_onto_a_cuda_11_build_and_no_further(tmp_path: Path):
    facts = json.loads((HOSTS / "k80-470.json").read_text())
    facts["host"]["driver"].update(driver_version="418.87.01", cuda_driver_version="10.1", nvml_version="10.418.87.01")
    path = tmp_path / "k80-418.json"
    path.write_text(json.dumps(facts))
    plan = fleet_json(str(path), "--plan", "--torch", "2.0")["plan"]
    (step,) = plan["steps"]
    assert step["cuda"].startswith("11.") and int(step["branch"][1:]) <= 470
    assert fleet_json(str(path), "--plan", "--torch", "2.7")["plan"]["never"][0]["reason"] == "gpu-not-built"


def test_plan_text_lists_steps_then_the_groups_no_upgrade_brings_in():
    run = invoke("fleet", str(HOSTS), "--plan", "--torch", "2.14")
    lines = run.stdout.splitlines()
    assert lines[0] == "Upgrade plan for PyTorch 2.14: runs on 6 of 12 judged hosts as they are; 8 after 2 step(s)"
    assert lines[1].startswith("  1. R525: driver >= 525.60.13 to run cu126") and "+1 hosts, 7 of 12" in lines[1]
    assert lines[2].strip().startswith("t4-470 (driver 470.82.01")
    assert any(line.strip().startswith("k80-470") and "gpu-not-built" in line for line in lines)
    both = invoke("fleet", str(HOSTS), "--plan", "--matrix").stdout
    assert both.index("Every host:") < both.index("Upgrade plan for PyTorch 2.15")
