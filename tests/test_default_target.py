"""With no --torch, --variant or --image, every command judges the newest release this host runs
(the newest that has an image, for --image), says so first, and reports what the newest release
needs as a finding of its own; a target asked for is judged strictly. With no driver and no GPU
(and no what-if), no CUDA build is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import HOSTS, host, invoke

# Hosts that run some release as they are: each passes (or warns) by default.
RUNS_SOMETHING = ["a100-525", "gtx1080ti-580", "h100-535", "h100-550", "k80-470", "rtx4090-550", "rtx5090-570", "t4-470", "v100-h100-550"]
BROKEN = ["driver-mismatch", "no-driver", "no-gpu-550"]


def test_every_shipped_snapshot_is_either_runnable_or_broken() -> None:
    assert sorted(RUNS_SOMETHING + BROKEN) == sorted(p.stem for p in HOSTS.glob("*.json"))


@pytest.mark.parametrize("name", RUNS_SOMETHING)
def test_a_host_that_runs_some_release_passes_by_default(name: str) -> None:
    run = invoke("check", "--snapshot", host(name))
    assert run.exit_code == 0, run.stdout
    assert run.stdout.splitlines()[0].startswith("OK") and "the newest release that runs here" in run.stdout.splitlines()[0] + run.stdout.splitlines()[1]


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_host_still_fails_by_default(name: str) -> None:
    assert invoke("check", "--snapshot", host(name)).exit_code == 1


def test_h100_on_550_runs_2_14_by_default_and_2_15_strictly_fails() -> None:
    run = invoke("check", "--snapshot", host("h100-550"))
    assert run.exit_code == 0 and "PyTorch 2.14" in run.stdout.splitlines()[0]
    data = invoke("check", "--json", "--snapshot", host("h100-550")).json()
    assert (data["target"]["torch"], data["target"]["variant"]) == ("2.14", "cu126")
    newer = [f for f in data["findings"] if f["code"] == "newer-release-available"]
    assert len(newer) == 1 and newer[0]["severity"] == "info"
    assert newer[0]["actions"][0] == {**newer[0]["actions"][0], "action": "upgrade-driver", "min_driver": "580.65.06", "torch": "2.15"}
    assert data["answer"]["newest_that_runs"] and data["recommendation"]["newest_release"]["torch"] == "2.15"
    strict = invoke("check", "--snapshot", host("h100-550"), "--torch", "2.15")
    assert strict.exit_code == 1
    assert "newer-release-available" not in strict.stdout  # asked for: judged strictly, nothing chosen for it


def test_the_newest_release_that_runs_is_not_judged_again_as_newer() -> None:
    data = invoke("check", "--json", "--driver", "595.45.04", "--gpu", "H100").json()
    assert data["target"]["torch"] == "2.15" and not any(f["code"] == "newer-release-available" for f in data["findings"])


def test_a_gpu_no_release_after_2_5_carries_says_so_without_a_driver_fix() -> None:
    # The K80's sm_37: official wheels up to 2.5 cu118 (pytorch/builder); 2.6/2.7's was third-party only.
    data = invoke("check", "--json", "--snapshot", host("k80-470")).json()
    newer = next(f for f in data["findings"] if f["code"] == "newer-release-available")
    assert "has no build for these GPUs" in newer["title"] and newer["actions"] == []
    assert data["target"]["torch"] == "2.5"


def test_recommend_image_on_535_names_a_pullable_official_image() -> None:
    run = invoke("recommend", "--image", "--driver", "535.104.05", "--gpu", "A100", "--format", "tag")
    assert run.exit_code == 0
    assert run.stdout == "pytorch/pytorch:2.14.1-cuda12.6-cudnn9-runtime\n"  # the newest release with an image that runs (2.14 has cu126 images)
    wheel = invoke("recommend", "--wheel", "--driver", "535.104.05", "--gpu", "A100", "--format", "json").json()
    assert wheel["recommendation"]["torch"] == "2.14"  # a wheel needs no image: 2.14 cu126


def test_recommend_says_which_release_it_chose_and_what_the_newest_needs() -> None:
    text = invoke("recommend", "--image", "--driver", "535.104.05", "--gpu", "A100").stdout
    assert "PyTorch 2.14 is the newest release with an image that runs here; PyTorch 2.15 needs driver >= 580.65.06" in text


@pytest.mark.parametrize("fmt,flag", [("index-url", "--wheel"), ("tag", "--image")])
def test_no_driver_no_gpu_gives_no_cuda_answer(fmt: str, flag: str) -> None:
    run = invoke("recommend", flag, "--format", fmt, "--snapshot", host("no-driver"))
    assert run.exit_code == 1 and run.stdout == ""
    assert "no NVIDIA driver was found" in run.stderr and "580.65.06" in run.stderr and "/whl/cpu" in run.stderr


def test_no_driver_report_says_what_is_missing_what_the_newest_needs_and_where_cpu_wheels_are() -> None:
    data = invoke("check", "--json", "--snapshot", host("no-driver")).json()
    assert data["recommendation"] is None
    kinds = [f["actions"][0]["action"] for f in data["answer"]["without_cuda"]]
    assert kinds == ["install-driver", "plan-with-what-if", "use-cpu-wheels"]
    text = invoke("check", "--snapshot", host("no-driver")).stdout
    assert "cudadoctor check --driver VERSION --gpu MODEL" in text
    assert any(line.strip().startswith("pip install 'torch==2.15.*' --index-url ") and line.endswith("/cpu") for line in text.splitlines())
    # A plan for another machine still gets its answer.
    plan = invoke("recommend", "--wheel", "--format", "index-url", "--snapshot", host("no-driver"), "--driver", "550.54.15", "--gpu", "H100")
    assert plan.exit_code == 0 and plan.stdout.strip().endswith("/whl/cu126")


def test_require_alone_judges_the_requirement_and_the_host_only() -> None:
    ok = invoke("check", "--json", "--snapshot", host("h100-550"), "--require", "cuda>=12.4")
    data = ok.json()
    assert ok.exit_code == 0 and data["target"]["origin"] == "--require" and data["target"]["torch"] == ""
    assert not any(f["code"] in ("driver-too-old", "newer-release-available") for f in data["findings"])
    unmet = invoke("check", "--snapshot", host("h100-550"), "--require", "cuda>=12.8")
    assert unmet.exit_code == 1 and "driver-too-old" not in unmet.stdout
    lines = unmet.stdout.splitlines()
    assert lines[0].startswith("FAIL") and lines[0].endswith("image-requirement-unsatisfied")
    assert lines[1].startswith("Fix: Upgrade the NVIDIA driver to >= 570.26")  # the requirement's fix, no build to switch to
    assert "Use instead" not in unmet.stdout


def test_the_fleet_answers_first_with_the_build_that_covers_most_hosts(tmp_path: Path) -> None:
    run = invoke("fleet", str(HOSTS))
    lines = run.stdout.splitlines()
    assert lines[0].startswith("Fleet answer: pytorch/pytorch:2.5.1-cuda11.8-cudnn9-runtime (PyTorch 2.5 cu118) runs on 8 of 12")
    assert lines[1].strip() == "It leaves out 4:"
    assert any("rtx5090-570: no driver makes PyTorch 2.5 cu118 run on" in line for line in lines[2:6])
    doc = invoke("fleet", "--json", str(HOSTS)).json()
    best = doc["fleet_recommendation"]
    assert (best["torch"], best["variant"], best["hosts"]) == ("2.5", "cu118", 8)  # with the K80: 2.5 is its last
    # The newest release among those with the highest coverage.
    tied = [c for c in doc["candidates"] if c["hosts"] == best["hosts"]]
    assert max(tuple(int(p) for p in c["torch"].split(".")) for c in tied) == (2, 5)
    assert doc["summary"]["fail"] == 3  # only the broken hosts fail: each other host runs its newest release


def test_the_fleet_names_the_driver_floor_that_brings_a_group_in(tmp_path: Path) -> None:
    snapshots = tmp_path / "s"
    snapshots.mkdir()
    for name in ("h100-550", "t4-470"):
        (snapshots / f"{name}.json").write_text((HOSTS / f"{name}.json").read_text())
    doc = invoke("fleet", "--json", str(snapshots), "--torch", "2.13").json()  # its images include cu126
    best = doc["fleet_recommendation"]
    assert best["hosts"] == 1
    left = best["left_out"][0]
    assert left["hosts"] == ["t4-470"] and left["fix"] == "upgrade the NVIDIA driver to >= 525.60.13 to run cu126"
    assert left["findings"] == ["driver-too-old"]


def test_the_fleet_counts_wheels_where_the_family_has_no_image(tmp_path: Path) -> None:
    # pytorch/pytorch offers no image of 1.10 on record; its cu113 wheels run on an A100 with driver 525.
    doc = invoke("fleet", "--json", host("a100-525"), "--torch", "1.10").json()
    best = doc["fleet_recommendation"]
    assert (best["variant"], best["image"], best["hosts"]) == ("cu113", None, 1)
    text = invoke("fleet", host("a100-525"), "--torch", "1.10").stdout.splitlines()[0]
    assert text.startswith("Fleet answer: PyTorch 1.10 cu113 (wheels: the pytorch/pytorch family has no image of it) runs on 1 of 1")


def test_a_pinned_fleet_build_names_what_brings_each_group_in() -> None:
    doc = invoke("fleet", "--json", str(HOSTS), "--torch", "2.15", "--variant", "cu132").json()
    left = {name: entry for entry in doc["fleet_recommendation"]["left_out"] for name in entry["hosts"]}
    assert left["a100-525"]["fix"].startswith("upgrade the NVIDIA driver to >= 580.65.06 to run cu132")  # not "use 2.14"
    assert left["k80-470"]["fix"] == "No variant of PyTorch 2.15 supports sm_37; PyTorch 2.5 is the newest that does."
    assert left["driver-mismatch"]["fix"].startswith("Reboot")


def test_no_gpu_visible_fails_on_that_alone() -> None:
    data = invoke("check", "--json", "--snapshot", host("no-gpu-550")).json()
    assert [f["code"] for f in data["findings"] if f["severity"] == "fail"] == ["no-gpu"]  # no driver-too-old for a release
    assert data["target"]["origin"] == "host-only" and data["answer"]["kind"] == "fix-first"


def test_a_driver_nvml_cannot_read_gets_its_own_fix_and_no_install_advice() -> None:
    data = invoke("check", "--json", "--snapshot", host("driver-mismatch")).json()
    assert data["answer"]["fix"]["code"] == "nvml-driver-mismatch" and data["answer"]["without_cuda"] == []
    assert data["no_recommendation"]["fixes"] == []


def test_the_no_driver_advice_follows_the_release_asked_for() -> None:
    data = invoke("recommend", "--wheel", "--torch", "2.7", "--format", "json", "--snapshot", host("no-driver")).json()
    fixes = data["no_recommendation"]["fixes"]
    assert fixes[0].startswith("PyTorch 2.7's default build (cu126) needs an NVIDIA driver >= 525.60.13")
    cpu = next(a for a in data["no_recommendation"]["actions"] if a["action"] == "use-cpu-wheels")
    assert cpu["pip_command"].startswith("pip install 'torch==2.7.*' --index-url ") and cpu["pip_command"].endswith("/cpu")


@pytest.mark.parametrize("gpu,driver,build", [("T4", "410.48", "1.3 cu100"), ("V100", "384.81", "1.1 cu90")])
def test_when_no_release_runs_the_smallest_upgrade_that_runs_one_leads(gpu: str, driver: str, build: str) -> None:
    # 375.26 (CUDA 8.0's driver) runs no release the table records (cu80 is not recorded). A V100 has sm_70
    # code in the cu90 builds of 1.0/1.1 (CUDA 9.0: 384.81); a T4's sm_75 needs CUDA 10.0 (410.48) code.
    data = invoke("check", "--json", "--driver", "375.26", "--gpu", gpu).json()
    assert data["verdict"] == "fail"
    first = data["answer"]["fix"]
    assert first["text"].startswith(f"upgrade the NVIDIA driver to >= {driver} to run PyTorch {build}")
    torch = build.split()[0]
    assert first["actions"][0] == {**first["actions"][0], "action": "upgrade-driver", "min_driver": driver, "torch": torch}
    # On 418.39 a 1.x release runs: the newest that does is the answer.
    assert invoke("check", "--json", "--driver", "418.39", "--gpu", gpu).json()["target"]["torch"] == "1.8"
    rec = invoke("recommend", "--wheel", "--format", "json", "--driver", "375.26", "--gpu", gpu).json()
    assert rec["no_recommendation"]["fixes"][0] == first["text"]


def test_when_the_newest_release_has_no_build_for_the_gpus_the_newest_that_does_is_named() -> None:
    data = invoke("check", "--json", "--driver", "410.48", "--gpu", "P100").json()
    newer = next(f for f in data["findings"] if f["code"] == "newer-release-available")
    assert newer["title"] == ("PyTorch 2.15, the newest release, has no build for these GPUs; "
                              "PyTorch 2.14 (cu126) runs them from driver >= 525.60.13")
    assert newer["actions"][0] == {**newer["actions"][0], "action": "upgrade-driver", "torch": "2.14", "min_driver": "525.60.13"}
    assert data["answer"]["newer"]["text"] == newer["title"]
