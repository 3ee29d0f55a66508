"""The OS probe on fixture sysroots, and the libcuda probe against the stand-in libcuda.so.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import cuda_stub
import nvml_stub
from cudadoctor.probe.system import parse_proc_version, probe_system, stub_directories
from sysroot import AMD_MI300, ASPEED_BMC, H100, PROC_OPEN, PROC_PROPRIETARY, make_sysroot


def test_proc_version_lines():
    assert parse_proc_version(PROC_OPEN.format(v="580.95.05")) == ("580.95.05", "open")
    assert parse_proc_version(PROC_PROPRIETARY.format(v="515.76")) == ("515.76", "proprietary")
    assert parse_proc_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build") == (
        "570.86.15",
        "open",
    )
    assert parse_proc_version("something else") == (None, None)


def test_bare_metal_host(tmp_path):
    root = make_sysroot(tmp_path, module="550.54.15", flavour="open", nodes=("nvidiactl", "nvidia-uvm", "nvidia1", "nvidia0", "nvidia10"),
                        pci=(H100, AMD_MI300, ASPEED_BMC), libs=["usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15"])
    facts = probe_system(root=str(root), environ={"CUDA_VISIBLE_DEVICES": "0", "UNRELATED": "x"})
    assert facts.kernel_module.loaded and facts.kernel_module.version == "550.54.15" and facts.kernel_module.flavour == "open"
    assert facts.device_nodes.nvidiactl and facts.device_nodes.nvidia_uvm
    assert facts.device_nodes.gpu_nodes == ("/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia10")
    assert [(d.vendor, d.device_id) for d in facts.pci_display_devices] == [("aspeed", "0x2000"), ("nvidia", "0x2330"), ("amd", "0x74a1")]
    assert facts.environment == (("CUDA_VISIBLE_DEVICES", "0"),)
    assert facts.in_container is False and facts.wsl is False
    assert facts.driver_libraries == ("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15",)


def test_no_driver(tmp_path):
    facts = probe_system(root=str(make_sysroot(tmp_path, module=None, nodes=())), environ={})
    assert facts.kernel_module.loaded is False and facts.kernel_module.version is None
    assert facts.device_nodes.nvidiactl is False and facts.device_nodes.gpu_nodes == ()


def test_unreadable_root_is_unknown_not_absent(tmp_path):
    facts = probe_system(root=str(tmp_path / "missing"), environ={})
    assert facts.kernel_module.loaded is None and facts.device_nodes.nvidiactl is None


@pytest.mark.parametrize("kind, runtime", [("docker", "docker"), ("podman", "podman"), ("kubepods", "kubernetes")])
def test_container_detection(tmp_path, kind, runtime):
    facts = probe_system(root=str(make_sysroot(tmp_path, container=kind)), environ={})
    assert facts.in_container and facts.container_runtime == runtime and facts.container_evidence


def test_wsl_detection(tmp_path):
    facts = probe_system(root=str(make_sysroot(tmp_path, wsl=True, module=None, nodes=())), environ={})
    assert facts.wsl and facts.wsl_gpu_libs and facts.wsl_dxg


def test_sysroot_from_the_environment(tmp_path):
    root = make_sysroot(tmp_path, module="470.256.02")
    assert probe_system(environ={"CUDADOCTOR_SYSROOT": str(root)}).kernel_module.version == "470.256.02"


def test_stub_directories():
    assert stub_directories("/usr/local/cuda/lib64/stubs:/usr/lib:/opt/cuda/targets/x86_64-linux/lib/stubs/") == (
        "/usr/local/cuda/lib64/stubs",
        "/opt/cuda/targets/x86_64-linux/lib/stubs/",
    )
    assert stub_directories("/usr/lib/stubsy:") == ()
    assert stub_directories(None) == ()


PROBE_LIBCUDA = "import json; from cudadoctor.probe.libcuda import probe_libcuda; from cudadoctor.model.snapshot import to_jsonable; print(json.dumps(to_jsonable(probe_libcuda())))"


def _probe_libcuda(env: dict) -> dict:
    full = {"PATH": os.environ.get("PATH", ""), **env}
    out = subprocess.run([sys.executable, "-c", PROBE_LIBCUDA], env=full, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_libcuda_version(fake_cuda_lib, tmp_path):
    config = nvml_stub.write_config(tmp_path / "cuda.conf", {"version": 12080})
    facts = _probe_libcuda({"LD_LIBRARY_PATH": str(fake_cuda_lib), "FAKE_CUDA_CONFIG": str(config)})
    assert facts["loadable"] and facts["driver_version"] == "12.8"
    assert facts["path"] == str(fake_cuda_lib / "libcuda.so.1")


def test_libcuda_stub_library_error(fake_cuda_lib, tmp_path):
    config = nvml_stub.write_config(tmp_path / "cuda.conf", {"version_rc": 34})
    facts = _probe_libcuda({"LD_LIBRARY_PATH": str(fake_cuda_lib), "FAKE_CUDA_CONFIG": str(config)})
    assert facts["error_code"] == 34 and "CUDA driver is a stub library" in facts["error"] and facts["driver_version"] is None


def test_libcuda_missing(tmp_path):
    if cuda_stub.system_libcuda_visible():
        pytest.skip("a real libcuda.so.1 is installed here")
    facts = _probe_libcuda({"LD_LIBRARY_PATH": str(tmp_path)})
    assert facts["loadable"] is False and "libcuda.so.1" in facts["error"]
