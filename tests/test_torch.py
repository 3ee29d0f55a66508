"""The installed-torch probe and rules: the real CPU build of torch 2.13.0 on a stand-in GPU host,
stand-in installs (a dist-info and torch/version.py on PYTHONPATH) for other builds, and
snapshots for runtime outcomes a CPU build cannot produce."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import nvml_stub
from cudadoctor.model.facts import (
    DriverFacts,
    GpuFacts,
    HostFacts,
    SystemFacts,
    TorchFacts,
)
from cudadoctor.model.snapshot import snapshot_to_dict
from cudadoctor.probe.torch_probe import probe_torch_metadata, probe_torch_runtime, variant_of
from cudadoctor.model.record import replace
from scenario import base_env, compose_env, run_check
from sysroot import make_sysroot

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed (pip install torch==2.13.0)")
H100 = {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "memory": 85520809984}


def gpu_host(fake_nvml_env, tmp_path, driver="580.65.06", cuda=13000, gpus=(H100,), pythonpath=None) -> dict:
    config = {"driver": driver, "cuda": cuda, "count": len(gpus)}
    for i, g in enumerate(gpus):
        config.update(nvml_stub.gpu_config(i, **g))
    env = compose_env(fake_nvml_env(config), make_sysroot(tmp_path / "root", module=driver))
    if pythonpath:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def fake_install(directory: Path, version: str, cuda) -> Path:
    """A torch install as the metadata probe reads it: the dist-info directory and torch/version.py."""
    (directory / f"torch-{version}.dist-info").mkdir(parents=True)
    (directory / "torch").mkdir()
    (directory / "torch" / "version.py").write_text(
        f"__version__ = '{version}'\ncuda: Optional[str] = {cuda!r}\nhip: Optional[str] = None\n"
    )
    return directory


def test_variant_of():
    assert variant_of("2.5.1+cu121", "12.1", None) == "cu121"
    assert variant_of("2.8.0", "12.8", None) == "cu128"
    assert variant_of("2.8.0", None, None) == "cpu"
    assert variant_of("2.5.1", None, "6.2.41133") == "rocm6.2"


@needs_torch
def test_metadata_of_the_real_cpu_build():
    facts = probe_torch_metadata()
    assert facts.installed and facts.version.startswith("2.13.0") and facts.variant == "cpu" and facts.cuda is None
    assert not facts.runtime_probed


@needs_torch
def test_runtime_of_the_real_cpu_build():
    facts = probe_torch_runtime(probe_torch_metadata())
    assert facts.runtime_probed and facts.cuda_available is False and facts.device_count == 0
    assert facts.cuda is None and facts.runtime_error is None
    assert "not compiled with CUDA" in (facts.cuda_error or "")


def test_no_torch(tmp_path):
    assert probe_torch_metadata([str(tmp_path)]) == TorchFacts(installed=False)


def test_runtime_probe_reports_a_broken_import(tmp_path, monkeypatch):
    fake_install(tmp_path, "2.5.1+cu121", "12.1")
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('libcudart.so.12: cannot open shared object file')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the child process imports this torch
    facts = probe_torch_runtime(probe_torch_metadata([str(tmp_path)]))
    assert facts.runtime_probed and "libcudart.so.12" in facts.runtime_error


def test_runtime_probe_timeout(tmp_path):
    fake_install(tmp_path, "2.5.1+cu121", "12.1")
    facts = probe_torch_metadata([str(tmp_path)])
    slow = tmp_path / "slow-python"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    facts = probe_torch_runtime(facts, timeout_s=0.5, python=str(slow))
    assert "did not finish within" in facts.runtime_error


@needs_torch
def test_cpu_build_on_a_gpu_host(fake_nvml_env, tmp_path):
    run = run_check(gpu_host(fake_nvml_env, tmp_path))
    finding = run.find("torch-cpu-build")
    assert finding["severity"] == "warn" and "Torch not compiled with CUDA enabled" in finding["detail"]
    assert "pip install --force-reinstall" in finding["hint"] and "--index-url" in finding["hint"]
    assert run.data["host"]["torch"]["variant"] == "cpu"


@needs_torch
def test_cpu_build_with_torch_runtime(fake_nvml_env, tmp_path):
    run = run_check(gpu_host(fake_nvml_env, tmp_path), "--torch-runtime")
    assert "torch-cpu-build" in run.codes
    torch = run.data["host"]["torch"]
    assert torch["runtime_probed"] and torch["cuda_available"] is False


@needs_torch
def test_probe_json_carries_torch_and_system(fake_nvml_env, tmp_path):
    run = run_check(gpu_host(fake_nvml_env, tmp_path), command="probe")
    host = run.data["host"]
    assert host["torch"]["installed"] and host["system"]["kernel_module"]["version"] == "580.65.06"


def test_cuda_build_newer_than_the_driver(fake_nvml_env, tmp_path):
    site = fake_install(tmp_path / "site", "2.9.0+cu130", "13.0")
    run = run_check(gpu_host(fake_nvml_env, tmp_path, driver="535.104.05", cuda=12020, pythonpath=site))
    finding = run.find("torch-cuda-too-new")
    assert "The NVIDIA driver on your system is too old (found version 535.104.05)" in finding["detail"]
    assert run.status == 1


def test_build_without_code_for_the_gpu(fake_nvml_env, tmp_path):
    site = fake_install(tmp_path / "site", "2.9.0+cu130", "13.0")
    v100 = {"name": "Tesla V100-SXM2-16GB", "cc": "7.0"}
    run = run_check(gpu_host(fake_nvml_env, tmp_path, gpus=(H100, v100), pythonpath=site))
    finding = run.find("torch-arch-missing")
    assert finding["gpu_index"] == 1
    assert "sm_70 is not compatible with the current PyTorch installation" in finding["detail"]


def test_fitting_cuda_build(fake_nvml_env, tmp_path):
    site = fake_install(tmp_path / "site", "2.9.0+cu128", "12.8")
    run = run_check(gpu_host(fake_nvml_env, tmp_path, pythonpath=site))
    assert "torch-ok" in run.codes and not {c for c in run.codes if c.startswith("torch-") and c != "torch-ok"}


# ---- runtime outcomes from snapshots ------------------------------------------------------------


ONE_H100 = (GpuFacts(0, name="NVIDIA H100 80GB HBM3", compute_capability="9.0"),)


def snapshot(tmp_path: Path, torch: TorchFacts, gpus: tuple[GpuFacts, ...] = ONE_H100) -> str:
    facts = HostFacts(
        driver=DriverFacts(nvml_state="ok", driver_version="580.65.06", cuda_driver_version="13.0"),
        gpus=gpus,
        system=SystemFacts(),
        torch=torch,
    )
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot_to_dict(facts)))
    return str(path)


CU128 = TorchFacts(installed=True, version="2.9.0+cu128", variant="cu128", cuda="12.8", location="/opt/venv/torch")


def test_cuda_unavailable_for_another_reason(tmp_path):
    torch = replace(
        CU128, runtime_probed=True, cuda_available=False, device_count=0,
        arch_list=("sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"),
        cuda_error="CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment",
    )
    run = run_check(base_env(), "--snapshot", snapshot(tmp_path, torch))
    finding = run.find("torch-cuda-unavailable")
    assert "CUDA unknown error" in finding["detail"] and run.status == 1


def test_runtime_arch_list_is_used(tmp_path):
    torch = replace(CU128, runtime_probed=True, cuda_available=True, device_count=1, arch_list=("sm_80", "sm_86"))
    run = run_check(base_env(), "--snapshot", snapshot(tmp_path, torch))
    assert "sm_90 is not compatible" in run.find("torch-arch-missing")["detail"]


def test_runtime_error_is_a_warning(tmp_path):
    torch = replace(CU128, runtime_probed=True, runtime_error="import torch failed: ImportError: libcudnn.so.9")
    run = run_check(base_env(), "--snapshot", snapshot(tmp_path, torch))
    assert "libcudnn.so.9" in run.find("torch-runtime-error")["detail"]


def test_runtime_ok(tmp_path):
    torch = replace(CU128, runtime_probed=True, cuda_available=True, device_count=1, arch_list=("sm_90",), cudnn="91002", nccl="2.27.3")
    run = run_check(base_env(), "--snapshot", snapshot(tmp_path, torch))
    finding = run.find("torch-ok")
    assert "1 CUDA device" in finding["title"] and "NCCL 2.27.3" in finding["detail"]


def test_torch_without_a_usable_gpu_is_information(tmp_path):
    run = run_check(base_env(), "--snapshot", snapshot(tmp_path, CU128, gpus=()))
    assert run.find("torch-installed")["severity"] == "info"


def test_old_snapshot_without_system_facts_keeps_nvml_library_missing(tmp_path):
    facts = HostFacts(driver=DriverFacts(nvml_state="library-missing"))
    path = tmp_path / "old.json"
    path.write_text(json.dumps(snapshot_to_dict(facts)))
    run = run_check(base_env(), "--snapshot", str(path))
    assert "nvml-library-missing" in run.codes


@pytest.mark.parametrize(
    "text, release, local, public",
    [
        ("2.5.1+cu121", "2.5", "cu121", "2.5.1"),
        ("2.13.0", "2.13", None, "2.13.0"),
        ("2.6.0.dev20241112+cu124", "2.6", "cu124", "2.6.0.dev20241112"),  # through packaging
        ("2.7.0rc1", "2.7", None, "2.7.0rc1"),
        ("1!2.5.0+rocm6.2", "2.5", "rocm6.2", "1!2.5.0"),
    ],
)
def test_torch_versions_are_read_as_pep_440(text, release, local, public):
    from cudadoctor.model.versions import parse_package_version

    version = parse_package_version(text)
    assert (version.major_minor, version.local, version.public) == (release, local, public)


def test_a_plain_torch_version_does_not_import_packaging():
    code = (
        "import sys; from cudadoctor.model.versions import parse_package_version as p; "
        "p('2.5.1+cu121'); assert 'packaging' not in sys.modules; p('2.6.0a0+git1'); assert 'packaging.version' in sys.modules"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
