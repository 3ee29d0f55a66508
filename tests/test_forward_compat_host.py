"""CUDA forward compatibility as host state: a cuda-compat libcuda in effect (a cuda-compat-X-Y
package under /usr/local/cuda-X.Y/compat that the loader finds, the libcuda this process loaded,
an image whose LD_LIBRARY_PATH names its compat directory, or --forward-compat X.Y for planning).

NVIDIA's CUDA Compatibility guide (forward compatibility): the cuda-compat package works on
data-center GPUs (and Jetson, select NGC Server Ready RTX cards), on the driver branches of its
matrix; on other GPUs CUDA fails with error 804, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
"forward compatibility was attempted on non supported HW". Users report a 4xA10 host on driver 470
with cuda-compat-12-x running PyTorch 2.4 cu121 (R470 is no longer in NVIDIA's matrix: it runs, and
the report says NVIDIA does not support it there).
"""

from __future__ import annotations

import os
from pathlib import Path

import nvml_stub
import pytest

from cudadoctor.app.loader import load_snapshot
from cudadoctor.model.facts import ImageFacts, LibcudaFacts
from cudadoctor.model.record import replace
from cudadoctor.probe.system import probe_system
from helpers import core_check, host, invoke
from sysroot import make_sysroot
from test_system_probe import _probe_libcuda

A10S = ("--gpu", "A10") * 4


def check_json(*args: str):
    run = invoke("check", "--json", *args)
    return run.exit_code, run.json(), {f["code"]: f for f in run.json()["findings"]}


# --- the what-if flag -------------------------------------------------------------------------------

def test_a10s_on_470_with_cuda_compat_12_run_2_4_cu121():
    code, doc, found = check_json("--torch", "2.4", "--variant", "cu121", "--driver", "470.256.02", *A10S, "--forward-compat", "12.4")
    assert code == 0 and doc["verdict"] == "warn"
    assert found["driver-ok"]["severity"] == "ok" and "forward compatibility" in found["driver-ok"]["title"]
    active = found["driver-forward-compat-active"]
    assert active["severity"] == "warn" and "R470 is not in NVIDIA's forward-compatibility matrix" in active["detail"]
    assert "driver-too-old" not in found


def test_without_the_compat_libcuda_the_same_host_is_too_old():
    code, _, found = check_json("--torch", "2.4", "--variant", "cu121", "--driver", "470.256.02", *A10S)
    assert code == 1 and "driver-too-old" in found


def test_on_a_matrix_branch_forward_compatibility_is_a_note():
    code, _, found = check_json("--torch", "2.8", "--variant", "cu128", "--driver", "535.104.05", "--gpu", "H100", "--forward-compat", "12.8")
    assert code == 0 and found["driver-forward-compat-active"]["severity"] == "info"
    assert "through CUDA forward compatibility" in found["driver-ok"]["title"]


def test_a_compat_libcuda_newer_than_it_does_not_cover_a_newer_cuda():
    code, _, found = check_json("--torch", "2.8", "--variant", "cu128", "--driver", "535.104.05", "--gpu", "H100", "--forward-compat", "12.4")
    assert "driver-ok" not in found and ("driver-minor-compat" in found or "driver-too-old" in found)


def test_geforce_with_a_compat_libcuda_fails_with_error_804_and_the_fix_takes_it_off_the_path():
    code, doc, found = check_json("--torch", "2.4", "--variant", "cu121", "--driver", "470.256.02", "--gpu", "RTX 3090", "--forward-compat", "12.4")
    bad = found["driver-forward-compat-unsupported-gpu"]
    assert code == 1 and bad["severity"] == "fail"
    assert "804" in bad["detail"] and "forward compatibility was attempted on non supported HW" in bad["detail"]
    assert "out of the loader's path" in bad["hint"] and "/usr/local/cuda-12.4/compat" in bad["hint"]
    assert found["driver-too-old"]["severity"] == "fail"  # a GeForce card gets nothing from it


def test_the_flag_works_on_recommend_too():
    run = invoke("recommend", "--wheel", "--torch", "2.4", "--driver", "470.256.02", *A10S, "--forward-compat", "12.4", "--format", "json")
    rec = run.json()["recommendation"]
    assert run.exit_code == 0 and rec["variant"] == "cu124" and rec["support"] == "forward-compat"  # not the driver alone


@pytest.mark.parametrize("value", ["abc", "99.9"])
def test_a_bad_forward_compat_value_is_a_one_line_usage_error(value):
    run = invoke("check", "--driver", "470.256.02", "--gpu", "A10", "--forward-compat", value)
    assert run.exit_code == 2 and "--forward-compat" in run.stderr and len(run.stderr.strip().splitlines()) == 1


# --- the probe ---------------------------------------------------------------------------------------

def _compat_tree(root: Path, version: str = "12.4", driver: str = "550.54.15") -> Path:
    make_sysroot(root, module="470.256.02")
    compat = root / "usr" / "local" / f"cuda-{version}" / "compat"
    compat.mkdir(parents=True)
    (compat / f"libcuda.so.{driver}").write_bytes(b"")
    (compat / "libcuda.so.1").symlink_to(f"libcuda.so.{driver}")
    return compat


def test_the_probe_finds_a_cuda_compat_package_on_ld_library_path(tmp_path):
    compat = _compat_tree(tmp_path)
    facts = probe_system(root=str(tmp_path), environ={"LD_LIBRARY_PATH": f"{compat}:/usr/lib"})
    (entry,) = facts.cuda_compat
    assert (entry.directory, entry.cuda, entry.library) == ("/usr/local/cuda-12.4/compat", "12.4", "libcuda.so.550.54.15")
    assert entry.in_effect and entry.how == "LD_LIBRARY_PATH"


def test_the_probe_finds_it_in_the_loaders_configuration(tmp_path):
    _compat_tree(tmp_path)
    conf = tmp_path / "etc" / "ld.so.conf.d"
    conf.mkdir(parents=True)
    (conf / "cuda-compat.conf").write_text("# cuda-compat\n/usr/local/cuda-12.4/compat\n")
    (entry,) = probe_system(root=str(tmp_path), environ={}).cuda_compat
    assert entry.in_effect and entry.how == "ld.so.conf"


def test_an_installed_package_the_loader_does_not_find_is_not_in_effect(tmp_path):
    _compat_tree(tmp_path)
    (tmp_path / "usr" / "local" / "cuda").symlink_to("cuda-12.4")  # listed once, under its own name
    (entry,) = probe_system(root=str(tmp_path), environ={"LD_LIBRARY_PATH": "/usr/lib"}).cuda_compat
    assert not entry.in_effect and entry.how is None


def test_the_stand_in_libcuda_loaded_from_a_compat_directory_counts_on_a_data_center_gpu(fake_cuda_lib, tmp_path):
    compat = _compat_tree(tmp_path / "root")
    os.remove(compat / "libcuda.so.1")
    (compat / "libcuda.so.1").write_bytes((fake_cuda_lib / "libcuda.so.1").read_bytes())
    config = nvml_stub.write_config(tmp_path / "cuda.conf", {"version": 12040})
    loaded = LibcudaFacts(**_probe_libcuda({"LD_LIBRARY_PATH": str(compat), "FAKE_CUDA_CONFIG": str(config)}))
    assert loaded.driver_version == "12.4" and loaded.path == str(compat / "libcuda.so.1")
    system = probe_system(root=str(tmp_path / "root"), environ={}, libcuda=loaded)
    assert [(e.how, e.in_effect) for e in system.cuda_compat] == [("loaded", True)]
    # A T4 host on R470 (NVML: CUDA 11.4) with that libcuda: cu121 runs, through forward compatibility.
    facts = replace(load_snapshot(host("t4-470")), system=system)
    result = core_check(facts, torch="2.4", variant="cu121", only=["driver-for-target", "forward-compat"])
    codes = {f.code: f for f in result.findings}
    assert "driver-ok" in codes and "forward compatibility" in codes["driver-ok"].title
    assert "/usr/local/cuda-12.4/compat" in codes["driver-forward-compat-active"].detail


# --- an image's own compat directory ---------------------------------------------------------------

def test_an_image_whose_library_path_names_its_compat_directory_brings_its_cuda():
    image = ImageFacts("pytorch/pytorch:2.4.1-cuda12.4-cudnn9-devel", state="ok", env=(
        ("CUDA_VERSION", "12.4.1"), ("PYTORCH_VERSION", "2.4.1"),
        ("LD_LIBRARY_PATH", "/usr/local/cuda/compat:/usr/local/nvidia/lib64"),
    ))
    facts = load_snapshot(host("t4-470"))
    result = core_check(facts, image=image.reference, image_facts=image, only=["driver-for-target", "forward-compat"])
    codes = {f.code: f for f in result.findings}
    assert "driver-ok" in codes and "forward compatibility" in codes["driver-ok"].title
    plain = replace(image, env=tuple(kv for kv in image.env if kv[0] != "LD_LIBRARY_PATH"))
    without = core_check(facts, image=image.reference, image_facts=plain, only=["driver-for-target"])
    assert [f.code for f in without.findings] == ["driver-too-old"]
