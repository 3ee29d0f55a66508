"""The last NVIDIA driver branch each GPU architecture runs (Kepler R470; Maxwell, Pascal and Volta
R580): recorded with its source, shown by `table --gpu`, and never crossed by a driver upgrade that
check, recommend or the fleet plan proposes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from cudadoctor.app.loader import default_table_path, load_table
from cudadoctor.model.versions import ComputeCapability, DriverVersion
from helpers import HOSTS, invoke

SHIPPED = json.loads(Path(default_table_path()).read_text(encoding="utf-8"))


def cc(text: str) -> ComputeCapability:
    return ComputeCapability.parse(text)


def driver_actions(doc: Any) -> Iterator[dict[str, Any]]:
    """Every upgrade-driver action anywhere in a JSON document (findings, answer, recommendation)."""
    if isinstance(doc, dict):
        if doc.get("action") == "upgrade-driver":
            yield doc
        for value in doc.values():
            yield from driver_actions(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from driver_actions(value)


def branches_named(doc: Any) -> set[int]:
    """The branch of every driver an upgrade-driver action names (its floor and its full driver)."""
    found = set()
    for action in driver_actions(doc):
        for key in ("min_driver", "full_driver"):
            if action.get(key):
                found.add(DriverVersion.parse(action[key]).branch)
    return found


def check_json(*args: str) -> dict[str, Any]:
    run = invoke("check", *args, "--json")
    assert run.exit_code in (0, 1), run.stderr
    return run.json()  # type: ignore[no-any-return]


def table_with_kepler_ending_at(tmp_path: Path, branch: int) -> str:
    data = copy.deepcopy(SHIPPED)
    next(row for row in data["last_driver_branches"] if row["architecture"] == "Kepler")["last_branch"] = branch
    path = tmp_path / "kepler-table.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


# --- the fact ------------------------------------------------------------------------------------


@pytest.mark.parametrize("gpu, branch", [("3.0", 470), ("3.7", 470), ("5.2", 580), ("6.1", 580), ("7.0", 580)])
def test_the_table_records_nvidias_last_branch_for_the_ended_architectures(gpu: str, branch: int):
    table = load_table()
    row = table.last_branch_for(cc(gpu))
    assert row is not None and row.last_branch == branch and row.evidence == "release-notes"
    assert row.source == "nvidia-dc-arch-matrix" and "Architecture Matrix" in table.cite(row.source)


def test_newer_architectures_have_no_last_branch_and_jetson_ones_none_on_record():
    table = load_table()
    assert all(table.last_branch_for(cc(c)).last_branch is None for c in ("7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"))
    # NVIDIA's matrix does not list Jetson TX2 (6.2) or Xavier (7.2): nothing is claimed for them.
    assert table.last_branch_for(cc("6.2")) is None and table.last_branch_for(cc("7.2")) is None


def test_the_ceiling_of_several_gpus_is_the_lowest_last_branch_among_them():
    table = load_table()
    assert table.driver_ceiling([cc("8.0"), cc("7.0"), cc("3.7")]).architecture == "Kepler"
    assert table.driver_ceiling([cc("9.0"), cc("7.0")]).last_branch == 580
    assert table.driver_ceiling([cc("9.0"), cc("12.0")]) is None


def test_table_gpu_shows_the_last_branch_in_text_and_json():
    text = invoke("table", "--gpu", "Tesla K80").stdout
    assert "last driver branch: R470: no newer driver supports Kepler GPUs" in text
    view = invoke("table", "--gpu", "V100", "--json").json()
    last = view["last_driver_branch"]
    assert (last["branch"], last["architecture"], last["evidence"]) == (580, "Volta", "release-notes")
    assert last["source"]["key"] == "nvidia-dc-arch-matrix"
    assert invoke("table", "--gpu", "H100", "--json").json()["last_driver_branch"]["branch"] is None
    assert "last driver branch: none yet" in invoke("table", "--gpu", "H100").stdout
    assert invoke("table", "--gpu", "Jetson TX2", "--json").json()["last_driver_branch"] is None


@pytest.mark.parametrize("change, words", [
    (lambda rows: rows[0].update(evidence="rumoured"), "evidence 'rumoured' must be one of release-notes, announced"),
    (lambda rows: rows[0].update(last_branch="470"), "'last_branch' must be a driver branch number"),
    (lambda rows: rows[0]["cc"].append("5.0"), "cc 5.0 is Maxwell in compute_capabilities, not Kepler"),
    (lambda rows: rows[1]["cc"].insert(0, "3.7"), "cc 3.7 is Kepler in compute_capabilities, not Maxwell"),
    (lambda rows: rows.append(copy.deepcopy(rows[0])), "cc 3.0 is already in the Kepler entry"),
    (lambda rows: rows[0]["cc"].append("9.9"), "unknown compute capability 9.9"),
    (lambda rows: rows[0].pop("source"), "last_driver_branches[Kepler]: missing source"),
    (lambda rows: rows.reverse(), "out of order"),
])
def test_a_broken_last_branch_entry_fails_validation_in_one_line(tmp_path: Path, change: Any, words: str):
    data = copy.deepcopy(SHIPPED)
    change(data["last_driver_branches"])
    path = tmp_path / "table.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    run = invoke("table", "--validate", str(path))
    assert run.exit_code == 2 and run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert words in line and "last_driver_branches" in line


# --- driver upgrades stop at the last branch ----------------------------------------------------


def test_a_k80_on_418_asked_for_torch_2_0_is_never_told_a_driver_past_r470():
    doc = check_json("--driver", "418.87.01", "--gpu", "Tesla K80", "--torch", "2.0")
    assert branches_named(doc) and max(branches_named(doc)) <= 470
    assert "515.43.04" not in json.dumps([a for a in driver_actions(doc)])
    too_old = next(f for f in doc["findings"] if f["code"] == "driver-too-old")
    (action,) = too_old["actions"]
    assert (action["min_driver"], action["full_driver"], action["support"]) == ("450.80.02", None, "minor-compat")
    assert "R470 is the last driver branch for Tesla K80 (Kepler)" in too_old["hint"]
    # The answer's upgrade for 2.0 says the build runs only under minor-version compatibility there.
    upgrade = next(f for f in doc["answer"]["other_fixes"] if f["actions"][0]["action"] == "upgrade-driver")
    assert "only under minor-version compatibility" in upgrade["text"] and upgrade["actions"][0]["full_driver"] is None


def test_a_k80_on_470_is_not_told_to_upgrade_for_full_cuda_11_8_support():
    doc = check_json("--snapshot", str(HOSTS / "k80-470.json"))
    minor = next(f for f in doc["findings"] if f["code"] == "driver-minor-compat")
    assert minor["actions"] == [] and "520.61.05" not in minor["hint"]
    assert "R470 is the last driver branch" in minor["detail"]
    assert max(branches_named(doc), default=0) <= 470


def test_a_k80_is_pointed_at_the_newest_release_it_reaches_within_r470():
    doc = check_json("--driver", "418.87.01", "--gpu", "Tesla K80")
    newer = next(f for f in doc["findings"] if f["code"] == "newer-release-available")
    (action,) = newer["actions"]
    assert DriverVersion.parse(action["min_driver"]).branch <= 470 and action["full_driver"] is None
    assert "R470 is the last driver branch for Tesla K80 (Kepler)" in newer["hint"]
    assert max(branches_named(doc)) <= 470


@pytest.mark.parametrize("torch", ["2.14", "2.15"])
def test_a_v100_is_never_told_a_driver_past_r580(torch: str):
    doc = check_json("--driver", "535.104.05", "--gpu", "V100", "--torch", torch)
    assert max(branches_named(doc), default=0) <= 580
    # CUDA 13.2's full support (595.45.04) is past R580: the hint says the V100 never gets it.
    if torch == "2.15":
        too_old = next(f for f in doc["findings"] if f["code"] == "driver-too-old")
        assert "595.45.04" not in json.dumps(too_old["actions"]) and "R580 is the last driver branch for V100 (Volta)" in too_old["hint"]


def test_a_cuda_build_whose_floor_is_past_the_last_branch_offers_no_upgrade(tmp_path: Path):
    # A table whose Kepler ends at R440: CUDA 11.x needs >= 450.80.02, past it.
    table = table_with_kepler_ending_at(tmp_path, 440)
    doc = check_json("--table", table, "--driver", "418.87.01", "--gpu", "Tesla K80", "--torch", "2.0")
    assert max(branches_named(doc), default=0) <= 440
    too_old = next(f for f in doc["findings"] if f["code"] == "driver-too-old")
    assert too_old["actions"] == [] and too_old["hint"].startswith("No driver these GPUs can run supports CUDA 11.7")
    run = invoke("recommend", "--table", table, "--driver", "418.87.01", "--gpu", "Tesla K80", "--torch", "2.0")
    assert run.exit_code == 1
    assert "cu117: needs driver >= 450.80.02 (CUDA 11.7); driver 418.87.01 is older, and R440 is the last driver branch for Tesla K80 (Kepler)" in (
        run.stdout + run.stderr)


# --- the fleet plan -----------------------------------------------------------------------------


def k80_418(tmp_path: Path) -> str:
    facts = json.loads((HOSTS / "k80-470.json").read_text())
    facts["host"]["driver"].update(driver_version="418.87.01", cuda_driver_version="10.1", nvml_version="10.418.87.01")
    path = tmp_path / "k80-418.json"
    path.write_text(json.dumps(facts))
    return str(path)


def test_the_fleet_plan_names_no_full_driver_past_the_gpus_last_branch(tmp_path: Path):
    run = invoke("fleet", k80_418(tmp_path), "--plan", "--torch", "2.0", "--json")
    (step,) = run.json()["plan"]["steps"]
    assert int(step["branch"][1:]) <= 470 and step["full_driver"] is None
    assert step["support"] == "minor-compat"
    text = invoke("fleet", k80_418(tmp_path), "--plan", "--torch", "2.0").stdout
    assert "through minor-version compatibility only: no driver these GPUs run supports it fully" in text
    assert "full support from" not in text


def test_a_group_whose_builds_need_a_driver_past_its_last_branch_is_never_planned(tmp_path: Path):
    run = invoke("fleet", k80_418(tmp_path), "--plan", "--torch", "2.0", "--json", "--table", table_with_kepler_ending_at(tmp_path, 440))
    assert run.exit_code == 1, run.stderr
    plan = run.json()["plan"]
    assert plan["steps"] == []
    (never,) = plan["never"]
    assert never["reason"] == "gpu-past-last-branch"
    assert "R440 is the last driver branch for Tesla K80 (Kepler)" in never["detail"] and ">= 450.80.02" in never["detail"]


def test_an_image_requirement_a_kepler_gpu_can_never_meet_names_no_driver_upgrade():
    doc = check_json("--driver", "470.256.02", "--gpu", "Tesla K80", "--require", "cuda>=11.8")
    unmet = next(f for f in doc["findings"] if f["code"] == "image-requirement-unsatisfied")
    assert unmet["hint"].startswith("No driver these GPUs can run is >= 520.61.05 (R470 is the last driver branch for Tesla K80 (Kepler))")
    # A GPU still supported by new branches is told the upgrade, as before.
    doc = check_json("--driver", "470.256.02", "--gpu", "T4", "--require", "cuda>=11.8")
    unmet = next(f for f in doc["findings"] if f["code"] == "image-requirement-unsatisfied")
    assert unmet["hint"].startswith("Upgrade the NVIDIA driver to >= 520.61.05 (CUDA 11.8)")


def test_the_ceiling_follows_the_gpus_cuda_can_see(tmp_path: Path):
    # V100 + H100 on 550, asked for 2.15 (CUDA 13.2, full support from 595.45.04): the V100 holds
    # the pair at R580; hidden by CUDA_VISIBLE_DEVICES, it no longer does.
    data = json.loads((HOSTS / "v100-h100-550.json").read_text())
    both = check_json("--snapshot", str(HOSTS / "v100-h100-550.json"), "--torch", "2.15")
    assert max(branches_named(both)) == 580
    data["host"]["system"] = {"environment": [["CUDA_VISIBLE_DEVICES", "1"]]}
    path = tmp_path / "h100-only.json"
    path.write_text(json.dumps(data))
    h100 = check_json("--snapshot", str(path), "--torch", "2.15")
    too_old = next(f for f in h100["findings"] if f["code"] == "driver-too-old")
    assert too_old["actions"][0]["full_driver"] == "595.45.04"


def test_a_table_without_last_branches_sets_no_limit(tmp_path: Path):
    data = copy.deepcopy(SHIPPED)
    del data["last_driver_branches"]
    path = tmp_path / "older-table.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    doc = check_json("--table", str(path), "--driver", "418.87.01", "--gpu", "Tesla K80", "--torch", "2.0")
    too_old = next(f for f in doc["findings"] if f["code"] == "driver-too-old")
    assert too_old["actions"][0]["full_driver"] == "515.43.04"
