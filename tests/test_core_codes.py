"""The skeleton's NVML, GPU and driver findings that no other test asserted yet, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import nvml_stub
from scenario import base_env, compose_env, run_check
from sysroot import make_sysroot

REPO = Path(__file__).resolve().parent.parent


def nvml_host(fake_nvml_env, tmp_path, **config) -> dict:
    base = {"driver": "580.65.06", "cuda": 13000, "count": 1, **nvml_stub.gpu_config(0, "NVIDIA H100 80GB HBM3", cc="9.0")}
    base.update(config)
    return compose_env(fake_nvml_env(base), make_sysroot(tmp_path / "root"))


def test_driver_not_loaded(fake_nvml_env, tmp_path):
    run = run_check(nvml_host(fake_nvml_env, tmp_path, init=9))
    assert "modprobe nvidia" in run.find("nvml-driver-not-loaded")["hint"] and run.status == 1


def test_no_permission_is_an_nvml_error(fake_nvml_env, tmp_path):
    run = run_check(nvml_host(fake_nvml_env, tmp_path, init=4))
    finding = run.find("nvml-error")
    assert "Insufficient Permissions" in finding["detail"] and "/dev/nvidia*" in finding["hint"]


def test_minor_version_compatibility(fake_nvml_env, tmp_path):
    env = compose_env(
        fake_nvml_env({"driver": "550.54.15", "cuda": 12040, "count": 1, **nvml_stub.gpu_config(0, cc="8.0")}),
        make_sysroot(tmp_path / "root", module="550.54.15"),
    )
    run = run_check(env, "--torch", "2.11", "--variant", "cu128")  # 2.15 (the default) has no cu128
    assert run.find("driver-minor-compat")["severity"] == "warn"


def test_unknown_compute_capability(fake_nvml_env, tmp_path):
    env = nvml_host(fake_nvml_env, tmp_path, **{"gpu0.name": "NVIDIA Future GPU", "fail.nvmlDeviceGetCudaComputeCapability": 3})
    assert run_check(env).find("gpu-cc-unknown")["severity"] == "warn"


def test_driver_without_gpu(tmp_path):
    run = run_check({**base_env(), "CUDADOCTOR_SYSROOT": str(make_sysroot(tmp_path / "root"))}, "--driver", "580.65.06")
    assert "gpu-not-specified" in run.codes


def test_ptx_only(tmp_path):
    table = json.loads((REPO / "data" / "compat_table.json").read_text())
    release = next(r for r in table["pytorch_releases"] if r["version"] == "2.9")
    variant = next(v for v in release["variants"] if v["name"] == "cu128")
    variant["arch_list"] = [cc for cc in variant["arch_list"] if cc != "12.0"]
    variant["ptx"] = ["9.0"]
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table))
    run = run_check(base_env(), "--table", str(path), "--torch", "2.9", "--variant", "cu128", "--driver", "580.65.06", "--gpu", "RTX 5090")
    assert run.find("gpu-arch-ptx-only")["severity"] == "warn"
