"""The NGC PyTorch family against GPUs its CUDA cannot build for, the smallest driver fix, --torch,
the config file's family and the evidence of a pick, through the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cudadoctor.app.loader import load_snapshot, load_table
from cudadoctor.model.record import replace
from helpers import core_check, host, invoke

TABLE = load_table()
REPO = TABLE.ngc_families[0].repository


def recommend(*args: str) -> tuple[int, Any]:
    run = invoke("recommend", "--image", "--family", "ngc-pytorch", "--format", "json", *args)
    return run.exit_code, run.json()


def check_json(*args: str) -> tuple[int, Any]:
    run = invoke("check", "--json", *args)
    return run.exit_code, run.json()


def findings(doc: Any) -> dict[str, Any]:
    return {f["code"]: f for f in doc["findings"]}


# --- 1: a CUDA minor without a toolkit row still has its major's floor ------------------------

def _table_without_toolkit_rows_after_13_2(tmp_path: Path) -> str:
    """The shipped table less its 13.3+ toolkit rows (NVRTC 13.3 on), so that 26.07 (CUDA 13.3) has none."""
    import json

    from cudadoctor.app.loader import default_table_path

    data = json.loads(Path(default_table_path()).read_text(encoding="utf-8"))
    data["toolkit_architectures"] = [r for r in data["toolkit_architectures"] if r["cuda"] in {"13.0", "13.1", "13.2"} or not r["cuda"].startswith("13.")]
    path = tmp_path / "table.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_volta_is_not_offered_a_cuda_13_month_the_table_has_no_toolkit_row_for(tmp_path: Path) -> None:
    # 26.07 is CUDA 13.3: in this table there is no 13.3 row, and CUDA 13.2 already starts at sm_75.
    table = _table_without_toolkit_rows_after_13_2(tmp_path)
    code, doc = recommend("--table", table, "--driver", "580.65.06", "--gpu", "V100")
    rec = doc["recommendation"]
    assert code == 0 and rec["variant"] == "25.05" and rec["cuda"] == "12.9"  # CUDA 12.9 still builds for sm_70
    reasons = {r["variant"]: r["reason"] for r in rec["rejected"]}
    assert "sm_70" in reasons["26.07"] and "13.3 row" in reasons["26.07"]
    assert "sm_70" in reasons["25.12"]
    tag = invoke("recommend", "--image", "--family", "ngc-pytorch", "--table", table, "--driver", "580.65.06", "--gpu", "V100", "--format", "tag")
    assert tag.exit_code == 0 and tag.stdout.strip() == f"{REPO}:25.05-py3"


def test_volta_and_the_shipped_cuda_13_3_toolkit_row() -> None:
    # The shipped table has a 13.3 row (NVRTC 13.3.33: sm_75 to sm_121): 26.07 is refused by it.
    code, doc = recommend("--driver", "580.65.06", "--gpu", "V100")
    rec = doc["recommendation"]
    assert code == 0 and rec["variant"] == "25.05"  # CUDA 12.9.0: the newest settled month that builds for sm_70
    reasons = {r["variant"]: r["reason"] for r in rec["rejected"]}
    assert "CUDA 13.3 cannot build for GPU 0 (V100), sm_70 (it supports sm_75 to sm_121)" in reasons["26.07"]


def test_check_of_the_ngc_family_on_volta_judges_the_month_that_runs() -> None:
    code, doc = check_json("--family", "ngc-pytorch", "--driver", "580.65.06", "--gpu", "V100")
    assert doc["target"]["image"] == f"{REPO}:25.05-py3"
    assert "ngc-gpu-unsupported" not in findings(doc) and doc["verdict"] != "fail" and code == 0


def test_the_floor_row_still_lets_a_turing_gpu_run_the_cuda_13_3_month() -> None:
    code, doc = recommend("--driver", "610.10", "--gpu", "T4")  # a driver newer than any CUDA 13.x floor
    rec = doc["recommendation"]
    assert code == 0 and rec["variant"] == "25.12"  # settled first; 26.07 runs too, but is unverified
    assert "26.07" in {r["variant"] for r in rec["rejected"]}
    assert "unverified" in {r["variant"]: r["reason"] for r in rec["rejected"]}["26.07"]


# --- 2: a month the GPU cannot run fails the check, and no driver is offered for it -----------

def test_check_of_a_month_whose_cuda_dropped_the_gpu_fails_with_ngc_gpu_unsupported() -> None:
    code, doc = check_json("--image", f"{REPO}:25.12-py3", "--driver", "595.45.04", "--gpu", "V100")
    found = findings(doc)
    assert code == 1 and doc["verdict"] == "fail"
    assert found["ngc-gpu-unsupported"]["severity"] == "fail"
    assert "25.05" in found["ngc-gpu-unsupported"]["hint"]  # the newest settled month whose CUDA builds for sm_70
    assert "ngc-forward-compat-unavailable" not in found


@pytest.mark.parametrize("gpu", ["V100", "K80"])
def test_no_fit_fixes_skip_months_the_gpu_cannot_run(gpu: str) -> None:
    code, doc = recommend("--driver", "470.256.02", "--gpu", gpu)
    if gpu == "V100":  # CUDA 12.x builds for sm_70: the fix is a driver for a 12.x month, never for 25.12 or 26.07
        assert code == 1 and doc["recommendation"] is None
        no = doc["no_recommendation"]
        assert all("25.12" not in fix and "26.07" not in fix for fix in no["fixes"])
        # The oldest settled month's own minimum (24.03, CUDA 12.4.0: 550.54.14) is below every live
        # forward-compatibility branch on 2026-12-01 (R580 starts at 580.65.06).
        assert [(a["variant"], a["support"]) for a in no["actions"]] == [("24.03", "full")]
    else:  # no month's CUDA builds for Kepler: no driver upgrade is offered at all
        assert code == 1 and doc["no_recommendation"]["fixes"] == [] and doc["no_recommendation"]["actions"] == []


# --- 3: the smallest driver that makes a month run ---------------------------------------------

@pytest.mark.parametrize(
    "today,floor,month,support",
    [
        # NVIDIA's data-center driver pages (615 edition): R535 ends in June 2026. Before that R535
        # (cuda-compat-13-1 in the matrix) is the smallest target, for the newest month at that floor;
        # from then on the live R580 (June 2028) starts at 13.0 GA's 580.65.06, above the oldest
        # settled month's own minimum (24.03, CUDA 12.4.0: 550.54.14), which is then the smallest.
        ("2026-05-01", "535.", "25.12", "forward-compat"),
        ("2026-12-01", "550.54.14", "24.03", "full"),
    ],
)
def test_data_center_t4_on_470_is_told_the_smallest_driver_floor(monkeypatch, today: str, floor: str, month: str, support: str) -> None:
    monkeypatch.setenv("CUDADOCTOR_TODAY", today)
    code, doc = recommend("--driver", "470.256.02", "--gpu", "T4")
    no = doc["no_recommendation"]
    assert code == 1 and doc["recommendation"] is None
    action = no["actions"][0]
    assert action["action"] == "upgrade-driver" and action["variant"] == month
    assert action["support"] == support and action["min_driver"].startswith(floor)
    assert no["fixes"][0].startswith(f"upgrade the driver to >= {action['min_driver']} for {REPO}:{month}-py3")


def test_an_end_of_life_branch_is_never_offered(monkeypatch) -> None:
    # R535 ended in June 2026, R610 is a New Feature Branch: neither is a target in December 2026,
    # and no fix names a driver of theirs.
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2026-12-01")
    for gpu in ("T4", "H100", "A100"):
        _, doc = recommend("--driver", "470.256.02", "--gpu", gpu)
        for action in doc["no_recommendation"]["actions"]:
            assert not action["min_driver"].startswith(("535.", "570.", "610.")), action


def test_the_forward_compat_floor_really_makes_the_month_run(monkeypatch) -> None:
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2026-05-01")  # while R535 is a live branch
    _, doc = recommend("--driver", "470.256.02", "--gpu", "T4")
    floor = doc["no_recommendation"]["actions"][0]["min_driver"]
    code, after = recommend("--driver", floor, "--gpu", "T4")
    assert code == 0 and after["recommendation"]["variant"] == doc["no_recommendation"]["actions"][0]["variant"] == "25.12"
    assert after["recommendation"]["support"] == "forward-compat"


def test_geforce_gets_the_month_minimum_driver_not_a_forward_compat_branch() -> None:
    code, doc = recommend("--driver", "470.256.02", "--gpu", "RTX 4090")
    # The smallest settled month's own minimum: 24.03 (CUDA 12.4.0) needs Table 3's 550.54.14.
    no = doc["no_recommendation"]
    assert code == 1 and no["actions"][0]["support"] == "full"
    assert no["actions"][0]["min_driver"] == "550.54.14" and no["actions"][0]["variant"] == "24.03"


# --- 4: --torch limits the months ---------------------------------------------------------------

BEFORE_R535_EOL = "2026-05-01"  # R535 is a live branch until June 2026: forward compatibility on it counts


def test_torch_picks_a_month_of_that_pytorch_minor(monkeypatch) -> None:
    monkeypatch.setenv("CUDADOCTOR_TODAY", BEFORE_R535_EOL)
    code, doc = recommend("--torch", "2.9", "--driver", "535.104.05", "--gpu", "H100")
    rec = doc["recommendation"]
    assert code == 0 and rec["variant"] == "25.10" and rec["torch"] == "2.9"
    reasons = {r["variant"]: r["reason"] for r in rec["rejected"]}
    assert "2.10" in reasons["25.12"] and "not 2.9" in reasons["25.12"]
    assert "25.11" in reasons  # no PyTorch recorded: skipped, and said


def test_torch_that_no_month_holds_is_refused_in_one_line() -> None:
    """No NGC month holds PyTorch 2.11: that question has no answer in this family, and judging a
    wheel of another family instead (as check once did) would answer a different one."""
    from helpers import invoke

    for command in (["recommend", "--image"], ["check"]):
        run = invoke(*command, "--family", "ngc-pytorch", "--torch", "2.11", "--driver", "535.104.05", "--gpu", "H100")
        assert run.exit_code == 2 and run.stdout == ""
        assert "no NGC PyTorch month in the table holds PyTorch 2.11" in run.stderr and len(run.stderr.splitlines()) == 1


def test_check_with_torch_and_the_ngc_family_judges_that_month(monkeypatch) -> None:
    monkeypatch.setenv("CUDADOCTOR_TODAY", BEFORE_R535_EOL)
    _, doc = check_json("--family", "ngc-pytorch", "--torch", "2.9", "--driver", "535.104.05", "--gpu", "H100")
    assert doc["target"]["image"] == f"{REPO}:25.10-py3"


# --- 5: the config file's family may be an NGC one -----------------------------------------------

def test_config_family_ngc_pytorch_is_the_default_family(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CUDADOCTOR_TODAY", BEFORE_R535_EOL)
    config = tmp_path / "c.toml"
    config.write_text('family = "ngc-pytorch"\n')
    run = invoke("recommend", "--config", str(config), "--image", "--format", "json", "--driver", "535.104.05", "--gpu", "H100")
    assert run.exit_code == 0, run.stderr
    rec = run.json()["recommendation"]
    assert rec["family"] == "ngc-pytorch" and rec["variant"] == "25.12"
    # --family still wins over the config's
    other = invoke("recommend", "--config", str(config), "--family", "pytorch-cuda", "--format", "json",
                   "--driver", "535.104.05", "--gpu", "H100")
    answer = other.json()
    assert other.exit_code in (0, 1) and (answer["recommendation"] or answer["no_recommendation"])["family"] == "pytorch-cuda"


def test_config_with_an_unknown_family_is_still_refused(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('family = "no-such-family"\n')
    run = invoke("recommend", "--config", str(config), "--driver", "535.104.05", "--gpu", "H100")
    assert run.exit_code == 2 and "ngc-pytorch" in run.stderr  # the known families include the NGC one


# --- 6: the evidence of an NGC pick ---------------------------------------------------------------

def test_a_settled_month_has_release_notes_evidence() -> None:
    _, doc = recommend("--driver", "590.44.01", "--gpu", "H100")
    rec = doc["recommendation"]
    assert rec["variant"] == "25.12" and rec["evidence"] == "release-notes"


def test_an_unverified_month_says_so_in_evidence_and_notes() -> None:
    # With only 25.12 settled, an H100 on R550 is sent to the newest unverified month it runs natively, and told so.
    table = replace(TABLE, ngc_releases=tuple(r for r in TABLE.ngc_releases if not r.settled or r.release == "25.12"))
    rec = core_check(load_snapshot(host("h100-550")), table=table, family="ngc-pytorch", only=["ngc"]).recommendation
    assert rec.variant == "24.02" and rec.evidence == "unverified"  # CUDA 12.3.2, only in TensorRT-LLM's notes
    assert any("unverified" in note and "24.02" in note and "CUDA" in note for note in rec.notes)


def test_a_month_nvidias_other_material_settles_says_secondary() -> None:
    _, doc = recommend("--driver", "580.65.06", "--gpu", "V100")
    rec = doc["recommendation"]
    assert rec["variant"] == "25.05" and rec["evidence"] == "secondary"
    assert any(note.startswith("secondary evidence") and "25.05" in note and "Triton" in note for note in rec["notes"])


# --- an unknown is not a fit ---------------------------------------------------------------------

def test_a_cuda_major_without_any_toolkit_row_is_unknown_not_a_fit() -> None:
    table = replace(TABLE, toolkit_architectures=tuple(r for r in TABLE.toolkit_architectures if r.cuda.major != 13))
    facts = load_snapshot(host("h100-535"))
    result = core_check(facts, table=table, image=f"{REPO}:25.12-py3", only=["ngc"])
    codes = {f.code: f.severity for f in result.findings}
    assert codes == {"ngc-gpu-unknown": "warn"}
    run = core_check(facts, table=table, family="ngc-pytorch", only=["ngc"])
    assert run.recommendation.variant == "25.05"  # 25.10, 25.12 and 26.07 are not counted as fits


def test_no_gpu_in_scope_is_not_a_forward_compat_fix() -> None:
    """With no GPU known (no driver here), forward compatibility cannot be promised: the fix is the
    month's own minimum driver, not a data-center branch floor."""
    code, doc = recommend("--snapshot", host("no-driver"))
    assert code == 1
    actions = doc["no_recommendation"]["actions"]
    assert actions and all(a["support"] != "forward-compat" for a in actions)


def test_nfd_labels_name_wheels_even_when_the_config_defaults_to_ngc() -> None:
    from cudadoctor.compat.config import apply_config, parse_config
    from cudadoctor.fleet.nfd import nfd_features

    table = load_table()
    facts = load_snapshot(host("h100-550"))
    ngc_default = apply_config(table, parse_config('family = "ngc-pytorch"', "config.toml"))
    assert nfd_features(facts, ngc_default) == nfd_features(facts, table)
