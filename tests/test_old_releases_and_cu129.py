"""PyTorch 1.x and the 2.12.1/2.13 cu129 builds are judged from recorded facts (issue 18).

Each case names the facts it rests on (data/compat_table.json; docs/table.md, "PyTorch 1.0 to 1.13").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudadoctor.app.loader import load_table
from helpers import invoke


def _codes(data):
    return {f["code"]: f["severity"] for f in data["findings"]}


def test_k80_on_1_13_cu117_runs_through_minor_version_compatibility() -> None:
    # 1.13.1+cu117 (PyPI wheel read): sm_37 code; driver 470.82.01 is CUDA 11.4, above the 11.x floor 450.80.02.
    data = invoke("check", "--json", "--torch", "1.13", "--variant", "cu117", "--driver", "470.82.01", "--gpu", "Tesla K80").json()
    assert (data["target"]["torch"], data["target"]["variant"]) == ("1.13", "cu117")
    codes = _codes(data)
    assert codes["gpu-arch-ok"] == "ok" and codes["driver-minor-compat"] == "warn"
    assert data["verdict"] == "warn"


def test_1_3_cu101_and_1_0_are_judged() -> None:
    # 1.3.1+cu101 (PyPI wheel read): sm_37 to sm_75; CUDA 10.1.105 needs 418.39 (Table 3).
    data = invoke("check", "--json", "--torch", "1.3", "--variant", "cu101", "--driver", "418.39", "--gpu", "T4").json()
    assert data["verdict"] == "ok" and _codes(data)["gpu-arch-ok"] == "ok"
    # 1.0's newest build is cu100 (build script 3.5;5.0+PTX;6.0;6.1;7.0;7.5); CUDA 10.0.130 needs 410.48. Below
    # that its cu90 (the PyPI wheel, read: sm_35-sm_70) runs from 9.0's 384.81; below that nothing does.
    data = invoke("check", "--json", "--torch", "1.0", "--driver", "410.48", "--gpu", "V100").json()
    assert data["verdict"] == "ok" and (data["target"]["torch"], data["target"]["variant"]) == ("1.0", "cu100")
    data = invoke("check", "--json", "--torch", "1.0", "--driver", "396.26", "--gpu", "V100").json()
    assert data["verdict"] == "ok" and data["target"]["variant"] == "cu90"
    too_old = invoke("check", "--json", "--torch", "1.0", "--driver", "375.26", "--gpu", "V100").json()
    assert too_old["verdict"] == "fail"


@pytest.mark.parametrize("driver,verdict", [("390.46", "ok"), ("384.81", "ok"), ("384.59", "fail")])
def test_1_0_cu90_on_a_v100_is_judged_from_the_cuda_9_0_row(driver, verdict) -> None:
    # NVIDIA's table (13.4 Update 1 notes, "Older CUDA versions"): CUDA 9.0 (9.0.76) needs >= 384.81. The 1.0.1
    # cu90 wheel (read) carries sm_70 code for the V100.
    data = invoke("check", "--json", "--torch", "1.0", "--variant", "cu90", "--driver", driver, "--gpu", "Tesla V100").json()
    codes = _codes(data)
    assert data["verdict"] == verdict and (data["target"]["variant"], data["target"]["cuda"]) == ("cu90", "9.0")
    assert codes["gpu-arch-ok"] == "ok"
    if verdict == "fail":
        assert codes["driver-too-old"] == "fail"


def test_cu92_builds_of_1_2_to_1_7_are_judged_from_the_cuda_9_2_row() -> None:
    # CUDA 9.2 (9.2.88) needs >= 396.26. 1.2's cu92 (3.5;5.0+PTX;6.0;6.1;7.0) has sm_35 code for a K40; from 1.3.1
    # the list starts at 3.7 (a K80), and 1.6's and 1.7's 3.7;5.0;6.0;7.0 has no sm_75 for a T4.
    ok = invoke("check", "--json", "--torch", "1.7", "--variant", "cu92", "--driver", "396.26", "--gpu", "Tesla K80").json()
    assert ok["verdict"] == "ok" and _codes(ok)["gpu-arch-ok"] == "ok"
    old = invoke("check", "--json", "--torch", "1.7", "--variant", "cu92", "--driver", "390.46", "--gpu", "Tesla K80").json()
    assert old["verdict"] == "fail" and _codes(old)["driver-too-old"] == "fail"
    k40 = invoke("check", "--json", "--torch", "1.2", "--variant", "cu92", "--driver", "396.26", "--gpu", "Tesla K40").json()
    assert k40["verdict"] == "ok"
    t4 = invoke("check", "--json", "--torch", "1.7", "--variant", "cu92", "--driver", "418.39", "--gpu", "T4").json()
    assert t4["verdict"] == "fail" and "gpu-arch-not-built" in _codes(t4)


def test_an_rtx_3090_gets_no_1_7_build_and_is_sent_to_1_8_cu111() -> None:
    # 1.7.1+cu102 (PyPI wheel read): sm_37-sm_75, no PTX. cu110 (+7.5;8.0) is CUDA 11.0, whose toolkit row stops
    # at 8.0, so the fix names no 1.7 variant; 1.8 cu111 (8924a150: +7.5;8.0;8.6) is the first with sm_86.
    data = invoke("check", "--json", "--torch", "1.7", "--variant", "cu102", "--driver", "455.23.05", "--gpu", "RTX 3090").json()
    arch = next(f for f in data["findings"] if f["code"] == "gpu-arch-not-built")
    assert "cu110" not in arch["hint"] and "No variant of PyTorch 1.7 supports sm_86" in arch["hint"]
    data = invoke("check", "--json", "--torch", "1.8", "--variant", "cu111", "--driver", "455.23.05", "--gpu", "RTX 3090").json()
    assert _codes(data)["gpu-arch-ok"] == "ok" and data["verdict"] == "ok"


def test_rtx_5090_on_570_gets_the_2_13_cu129_index() -> None:
    # 2.13 cu129: sm_75-sm_120 (release/2.13's build, PR 188443); cu130/cu132 need 580; cu126 has no sm_120.
    run = invoke("recommend", "--wheel", "--torch", "2.13", "--driver", "570.86.10", "--gpu", "RTX 5090", "--format", "index-url")
    assert run.exit_code == 0 and run.stdout.strip().endswith("/whl/cu129")


def test_h100_on_575_gets_cu129_with_full_support_and_its_evidence() -> None:
    data = invoke("recommend", "--wheel", "--torch", "2.13", "--driver", "575.51.03", "--gpu", "H100", "--format", "json").json()
    chosen = data["recommendation"]
    assert (chosen["variant"], chosen["support"], chosen["evidence"]) == ("cu129", "full", "build-script")
    data = invoke("recommend", "--wheel", "--torch", "2.12", "--driver", "575.51.03", "--gpu", "H100", "--format", "json").json()
    assert (data["recommendation"]["variant"], data["recommendation"]["install_version"]) == ("cu129", "2.12.1")


@pytest.mark.parametrize(
    "torch,variant,driver,gpu,command,style",
    [
        # PyTorch's previous-versions page: -f .../torch_stable.html with a local label for 1.2-1.10 ...
        ("1.7", "cu92", "396.26", "Tesla K80", "pip install 'torch==1.7.1+cu92' -f {root}/torch_stable.html", "find-links"),
        # ... where the release's default wheel is PyPI's plain one ("# CUDA 10.2: pip install torch==1.7.1") ...
        ("1.7", "cu102", "440.33", "V100", "pip install 'torch==1.7.1'", "find-links"),
        # ... --extra-index-url with the variant's index for 1.11-1.13 ...
        ("1.13", "cu117", "515.43.04", "A100", "pip install 'torch==1.13.1+cu117' --extra-index-url {root}/cu117", "extra-index-url"),
        # ... and --index-url from 2.0 on.
        ("2.0", "cu118", "520.61.05", "A100", "pip install 'torch==2.0.*' --index-url {root}/cu118", "index-url"),
    ],
)
def test_old_releases_print_the_install_command_pytorch_documents(torch, variant, driver, gpu, command, style) -> None:
    command = command.format(root=load_table().wheel_index_root())  # the index lives only in the table
    data = invoke("recommend", "--wheel", "--torch", torch, "--driver", driver, "--gpu", gpu, "--format", "json").json()
    chosen = data["recommendation"]
    assert chosen["variant"] == variant and chosen["install_style"] == style
    assert chosen["pip_command"] == command
    assert chosen["wheel_index_url"].endswith(f"/whl/{variant}")  # the key stays, whatever the command's form
    check = invoke("check", "--json", "--torch", torch, "--variant", variant, "--driver", driver, "--gpu", gpu).json()
    assert check["answer"]["build"]["pip_command"] == command


def test_a_1_0_wheel_other_than_pypis_is_a_download_from_its_page() -> None:
    # 1.0.1 and 1.1.0: the page has no pip command, only "Download and install wheel from .../cuNNN/torch_stable.html";
    # PyPI's plain wheel is the cu90 one (read), so only that one gets a pip line.
    run = invoke("check", "--torch", "1.0", "--variant", "cu100", "--driver", "410.48", "--gpu", "V100")
    assert run.exit_code == 0 and "pip install" not in run.stdout
    page = f"{load_table().wheel_index_root()}/cu100/torch_stable.html"
    assert f"download it for your Python from {page}" in run.stdout
    data = invoke("recommend", "--wheel", "--torch", "1.0", "--driver", "410.48", "--gpu", "V100", "--format", "json").json()
    chosen = data["recommendation"]
    assert (chosen["variant"], chosen["pip_command"], chosen["install_style"]) == ("cu100", None, "wheel-page")
    assert chosen["wheel_page_url"].endswith("/whl/cu100/torch_stable.html")
    cu90 = invoke("recommend", "--wheel", "--torch", "1.0", "--driver", "396.26", "--gpu", "V100", "--format", "json").json()
    assert cu90["recommendation"]["pip_command"] == "pip install 'torch==1.0.1'"


def test_a_cpu_build_of_an_old_release_is_told_to_reinstall_in_its_documented_form(tmp_path) -> None:
    # torch 1.7.1+cpu on a K80 with driver 470 (CUDA 11.4): 1.7's cu110 (3.7;5.0;6.0;7.0;7.5;8.0) runs; PyTorch's page
    # installs 1.7.1 wheels with -f .../torch_stable.html, not from a per-variant index.
    data = json.loads((Path(__file__).parent / "hosts" / "k80-470.json").read_text(encoding="utf-8"))
    data["host"]["torch"] = {"installed": True, "version": "1.7.1+cpu", "variant": "cpu", "cuda": None}
    snapshot = tmp_path / "k80-torch-1.7.1-cpu.json"
    snapshot.write_text(json.dumps(data), encoding="utf-8")
    run = invoke("check", "--json", "--snapshot", str(snapshot))
    hint = next(f for f in run.json()["findings"] if f["code"] == "torch-cpu-build")["hint"]
    root = load_table().wheel_index_root()
    assert hint.startswith(f"pip install --force-reinstall 'torch==1.7.1+cu110' -f {root}/torch_stable.html")
    assert "--index-url" not in hint
