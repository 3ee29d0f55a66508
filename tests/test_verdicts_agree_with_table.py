"""Verdicts that must agree with the table's own facts.

Each case is a what-if plan or a table variant that once gave a contradictory answer.
"""

from __future__ import annotations

import copy
import json

import pytest

from helpers import REPO_ROOT, host, invoke, run_cli

SHIPPED = json.loads((REPO_ROOT / "data" / "compat_table.json").read_text())


def findings(*args):
    run = invoke("check", "--json", *args)
    return run, {f["code"]: f for f in run.json()["findings"]}


# --- a planned driver older than the GPU's architecture -----------------------------------------


@pytest.mark.parametrize(
    "driver,gpu,first_driver",
    [
        ("450.80.02", "H100", "520.61.05"),  # sm_90 arrived with CUDA 11.8 (Table 3: 520.61.05)
        ("525.60.13", "RTX 5090", "570.26"),  # sm_120 arrived with CUDA 12.8 (Table 3: 570.26)
        ("440.33", "A100", "450.51.05"),  # sm_80 arrived with CUDA 11.0 GA (450.51.05; the RC row does not count)
    ],
)
def test_planned_driver_older_than_the_architecture_warns(driver, gpu, first_driver):
    run, codes = findings("--driver", driver, "--gpu", gpu, "--torch", "2.0")
    assert codes["driver-predates-gpu"]["severity"] == "warn"
    assert f">= {first_driver}" in codes["driver-predates-gpu"]["hint"]


def test_an_architecture_older_than_the_table_is_never_said_to_be_newer_than_the_driver():
    # Kepler predates CUDA 10.0, the table's first row: no lower bound can be derived for it.
    run, codes = findings("--driver", "418.39", "--gpu", "K80", "--torch", "2.0")
    assert "driver-predates-gpu" not in codes


def test_a_real_host_is_not_second_guessed():
    # NVML listing the GPU proves the driver drives it (snapshot from a real host).
    run, codes = findings("--snapshot", host("h100-535"), "--torch", "2.5")
    assert "driver-predates-gpu" not in codes


# --- forward compatibility follows NVIDIA's branch matrix and the toolkit's range --------------


@pytest.mark.parametrize(
    "args,code,says",
    [
        # R470 and R550 are not in NVIDIA's matrix (end of life / not a target).
        (["--snapshot", host("t4-470"), "--torch", "2.9", "--variant", "cu130"], "driver-forward-compat-unavailable", "R470 is not in NVIDIA's forward-compatibility matrix"),
        (["--driver", "550.54.14", "--gpu", "T4", "--torch", "2.9", "--variant", "cu130"], "driver-forward-compat-unavailable", "R550 is not in"),
        # CUDA 13.0 starts at sm_75: no package makes it target a V100 or a K80.
        (["--driver", "570.124.06", "--gpu", "V100", "--gpu", "H100", "--torch", "2.11", "--variant", "cu130"], "driver-forward-compat-unavailable", "CUDA 13.0 cannot target GPU 0"),
        # R535 takes cuda-compat-13-0 in NVIDIA's matrix, but it ended in June 2026 (NVIDIA's
        # data-center driver pages, 615 edition): no target on the run's date (the table's, here).
        (["--driver", "535.104.05", "--gpu", "H100", "--torch", "2.9", "--variant", "cu130"], "driver-forward-compat-unavailable", "R535 is no longer a supported branch"),
        # R570 is listed by neither the 615 nor the 620 edition: not a target either.
        (["--driver", "570.124.06", "--gpu", "H100", "--torch", "2.9", "--variant", "cu130"], "driver-forward-compat-unavailable", "R570 is no longer a supported branch"),
    ],
)
def test_forward_compat_claims(args, code, says):
    run, codes = findings(*args)
    assert code in codes and says in codes[code]["title"]
    other = {"driver-forward-compat-available", "driver-forward-compat-unavailable"} - {code}
    assert not other & set(codes)


def test_forward_compat_on_r535_before_its_end_of_life(monkeypatch):
    # Before June 2026 R535 was a live Long Term Support Branch: cuda-compat-13-0 is the way; from
    # its end-of-life month on it is not.
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2026-05-01")
    _, codes = findings("--driver", "535.104.05", "--gpu", "H100", "--torch", "2.9", "--variant", "cu130")
    assert "R535 through cuda-compat-13-0" in codes["driver-forward-compat-available"]["title"]
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2026-06-01")
    _, codes = findings("--driver", "535.104.05", "--gpu", "H100", "--torch", "2.9", "--variant", "cu130")
    assert "end of life June 2026" in codes["driver-forward-compat-unavailable"]["detail"]


# --- hiding blocked GPUs keeps only GPUs the build runs on ---------------------------------------


def test_hint_excludes_every_blocked_gpu():
    run, _ = findings("--driver", "570.124.06", "--gpu", "V100", "--gpu", "V100", "--gpu", "H100", "--torch", "2.11", "--variant", "cu130")
    blocked = [f for f in run.json()["findings"] if f["code"] == "gpu-arch-not-built"]
    assert [f["gpu_index"] for f in blocked] == [0, 1]
    assert all("CUDA_VISIBLE_DEVICES=2." in f["hint"] for f in blocked)


def test_no_hint_to_hide_gpus_when_none_would_be_left():
    run, _ = findings("--snapshot", host("k80-470"), "--torch", "2.8", "--variant", "cu128")
    blocked = [f for f in run.json()["findings"] if f["code"] == "gpu-arch-not-built"]
    assert len(blocked) == 2 and not any("CUDA_VISIBLE_DEVICES" in f["hint"] for f in blocked)


# --- PTX is not JIT-compiled under minor-version compatibility -----------------------------------


def test_ptx_only_build_under_minor_compat_is_not_runnable(tmp_path):
    # A table where 2.9 cu128/cu129 carry sm_120 only as PTX: a 12.6 driver runs them only under
    # minor-version compatibility, which cannot JIT newer PTX, so neither may be recommended.
    table = copy.deepcopy(SHIPPED)
    release = next(r for r in table["pytorch_releases"] if r["version"] == "2.9")
    for variant in release["variants"]:
        if variant["name"] in ("cu128", "cu129"):
            variant["arch_list"] = [cc for cc in variant["arch_list"] if cc != "12.0"]
            variant["ptx"] = ["9.0"]
    path = tmp_path / "ptx.json"
    path.write_text(json.dumps(table))
    run, codes = findings("--table", str(path), "--torch", "2.9", "--driver", "560.35.03", "--gpu", "RTX 5090", "--variant", "cu128")
    assert codes["gpu-arch-not-built"]["severity"] == "fail"
    assert "minor-version compatibility cannot JIT-compile" in codes["gpu-arch-not-built"]["detail"]
    rec = run_cli("recommend", "--wheel", "--format", "json", "--table", str(path), "--torch", "2.9", "--driver", "560.35.03", "--gpu", "RTX 5090")
    assert rec.exit_code == 1
    reasons = {r["variant"]: r["reason"] for r in rec.json()["no_recommendation"]["rejected"]}
    assert "cannot JIT-compile under minor-version compatibility" in reasons["cu129"]
    # With a driver that fully supports CUDA 12.8, the PTX is JIT-compiled: runnable, with a warning.
    run, codes = findings("--table", str(path), "--torch", "2.9", "--driver", "570.124.06", "--gpu", "RTX 5090", "--variant", "cu128")
    assert codes["gpu-arch-ptx-only"]["severity"] == "warn"


# --- the torch hint never names a build the same report rejects --------------------------------


def test_torch_hint_names_a_build_that_fits(tmp_path):
    snap = json.loads((REPO_ROOT / "tests" / "hosts" / "t4-470.json").read_text())
    snap["host"]["torch"] = {"installed": True, "version": "2.8.0+cu128", "variant": "cu128", "cuda": "12.8"}
    path = tmp_path / "t4-torch.json"
    path.write_text(json.dumps(snap))
    run, codes = findings("--snapshot", str(path))
    hint = codes["torch-cuda-too-new"]["hint"]
    # 470 runs CUDA 11.x builds (minor-version compatibility from 450.80.02): the newest release with
    # a cu118 build is 2.7; nothing for CUDA 12 or 13 may be suggested.
    assert "torch==2.7.*" in hint and hint.endswith("explains the choice)") and "/cu118" in hint


# --- what-if GPUs, memory, patch releases, embedded GPUs, unverified variants ------------------


def test_brand_conditions_on_a_what_if_gpu_are_flagged_not_trusted():
    # The official CUDA 12.4 image style: cuda>=12.4, or a brand/driver-branch alternative.
    req = "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=geforce,driver>=535,driver<536"
    run, codes = findings("--driver", "470.82.01", "--gpu", "RTX 3090", "--require", req)
    ok = codes["image-requirements-ok"]
    assert ok["severity"] == "warn" and "brand" in ok["detail"]
    # Without brand conditions nothing depends on the unknown brand.
    run, codes = findings("--driver", "550.54.15", "--gpu", "RTX 3090", "--require", "cuda>=12.4")
    assert codes["image-requirements-ok"]["severity"] == "ok"


def test_min_memory_says_when_it_could_not_check():
    run, codes = findings("--driver", "550.54.15", "--gpu", "A100", "--min-memory", "60GiB")
    assert codes["gpu-memory-unknown"]["severity"] == "info" and "gpu-memory-low" not in codes


@pytest.mark.parametrize("version", ["2.9.0", "2.9.1", "2.9"])
def test_any_patch_release_names_its_minor(version):
    run, _ = findings("--driver", "570.86.16", "--gpu", "H100", "--torch", version)
    assert run.exit_code == 0 and run.json()["target"]["torch"] == "2.9"


def test_an_older_patch_tag_of_the_official_images_is_known(tmp_path):
    # pytorch/pytorch:2.5.0-... is a published tag; the table records 2.5.1 as the release's newest
    # patch, and both carry the same CUDA variants. No daemon answers here: the table's facts decide.
    env = {"DOCKER_HOST": f"unix://{tmp_path}/nobody.sock"}
    run = run_cli("check", "--json", "--image", "pytorch/pytorch:2.5.0-cuda12.4-cudnn9-runtime", "--driver", "550.54.15",
                  "--gpu", "H100", "--timeout", "1", env=env)
    data = run.json()
    assert (data["target"]["torch"], data["target"]["variant"]) == ("2.5", "cu124")
    assert {f["code"]: f["severity"] for f in data["findings"]}["image-inspect-failed"] == "warn"


def test_jetson_is_flagged_as_outside_the_wheel_verdicts():
    run, codes = findings("--driver", "540.4.0", "--gpu", "Jetson AGX Orin")
    assert codes["gpu-embedded"]["severity"] == "warn" and "JetPack" in codes["gpu-embedded"]["detail"]


def test_no_fit_on_a_release_with_unverified_variants_says_so():
    rec = run_cli("recommend", "--wheel", "--format", "json", "--torch", "2.15", "--driver", "580.65.06", "--gpu", "V100")
    assert rec.exit_code == 1
    no_fit = rec.json()["no_recommendation"]
    assert no_fit["unverified_variants"] == ["cu130"]
    assert any("cu130" in note and "never offered" in note for note in no_fit["notes"])
    assert {r["variant"]: r["reason"] for r in no_fit["rejected"]}["cu130"].endswith("(unverified)")


# --- a driver newer than the table's newest row -----------------------------------------------


def test_a_host_whose_driver_reports_cuda_13_4_is_judged_from_table_rows(tmp_path):
    # NVML's own answer (CUDA 13.4 on an R615 driver) is the driver's CUDA, and the table has its row (13.4
    # GA, the R615 branch); the build judged (2.15 cu132) has its own Table 3 row, 13.2 GA's 595.45.04, so
    # no major floor is involved.
    data = json.loads(open(host("h100-550"), encoding="utf-8").read())
    data["host"]["driver"].update(driver_version="615.71.09", cuda_driver_version="13.4")
    snapshot = tmp_path / "h100-615.json"
    snapshot.write_text(json.dumps(data), encoding="utf-8")
    _, codes = findings("--snapshot", str(snapshot), "--torch", "2.15", "--variant", "cu132")
    assert "CUDA up to 13.4" in codes["nvml-ok"]["detail"]
    assert "CUDA 13.2 needs >= 595.45.04" in codes["driver-ok"]["detail"]


def test_a_planned_r615_driver_is_judged_as_cuda_13_4_from_the_branch_row():
    # NVIDIA's 13.4 Update 1 notes print 13.4's driver as a branch, R615 (the Linux driver is no longer
    # bundled), so the 13.4 rows hold 615: any R615 driver runs CUDA 13.4; an R610 one stops at 13.3.
    _, codes = findings("--driver", "615.71.09", "--gpu", "H100")
    assert "CUDA up to 13.4" in codes["nvml-ok"]["detail"]
    _, codes = findings("--driver", "610.43.02", "--gpu", "H100")
    assert "CUDA up to 13.3" in codes["nvml-ok"]["detail"]
