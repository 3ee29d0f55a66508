"""Driver, device-node, environment, container, WSL, health and MIG findings, end to end:
`cudadoctor check --json` in a child process on the stub NVML (and stub libcuda) with a fixture
sysroot. Each test names the finding code it produces."""

from __future__ import annotations

import itertools
from typing import Optional

import pytest

import cuda_stub
import nvml_stub
from scenario import CheckRun, compose_env, run_check
from sysroot import AMD_MI300, ASPEED_BMC, INTEL_ARC, make_sysroot

RTX4090 = dict(name="NVIDIA GeForce RTX 4090", brand=5, cc="8.9", memory=25757220864)
V100 = dict(name="Tesla V100-SXM2-16GB", brand=2, cc="7.0", memory=17179869184)
K80 = dict(name="Tesla K80", brand=2, cc="3.7", memory=12884901888)


def host_config(*gpus: dict, driver: str = "580.65.06", cuda: int = 13000, **extra) -> dict:
    gpus = gpus or ({"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "memory": 85520809984},)
    config: dict = {"driver": driver, "cuda": cuda, "nvml": "12." + driver, "count": len(gpus)}
    for index, gpu in enumerate(gpus):
        config.update(nvml_stub.gpu_config(index, **gpu))
    config.update(extra)
    return config


@pytest.fixture
def host(fake_nvml_env, fake_cuda_lib, tmp_path):
    """``host(nvml_config, root=..., env=..., libcuda=..., args=...) -> CheckRun``."""
    counter = itertools.count()

    def run(
        config: Optional[dict] = None,
        *,
        root: Optional[dict] = None,
        env: Optional[dict] = None,
        libcuda: Optional[dict] = None,
        nvml_missing: bool = False,
        args: tuple[str, ...] = (),
    ) -> CheckRun:
        n = next(counter)
        sysroot = make_sysroot(tmp_path / f"root{n}", **(root or {}))
        if nvml_missing:
            if nvml_stub.system_nvml_visible():
                pytest.skip("a real libnvidia-ml.so.1 is installed here; it cannot be hidden")
            empty = tmp_path / f"no_nvml{n}"
            empty.mkdir()
            nvml = {"LD_LIBRARY_PATH": str(empty)}
        else:
            nvml = fake_nvml_env(config if config is not None else host_config())
        cuda_dir = cuda_config = None
        if libcuda is not None:
            cuda_dir = fake_cuda_lib
            cuda_config = nvml_stub.write_config(tmp_path / f"fake_cuda{n}.conf", libcuda)
        elif cuda_stub.system_libcuda_visible():
            pytest.skip("a real libcuda.so.1 is installed here; it cannot be hidden")
        return run_check(compose_env(nvml, sysroot, env, cuda_dir, cuda_config), *args)

    return run


# ---- driver and kernel module -----------------------------------------------------------------


def test_matching_kernel_module_and_library_give_no_driver_findings(host):
    run = host(args=("--torch", "2.14"))  # cu130: fully supported by the 580 driver (2.15's cu132 needs 595)
    assert run.status == 0, run.data["findings"]
    assert {"nvml-ok", "gpu-ok", "driver-ok"} <= run.codes
    assert not {"nvml-driver-mismatch", "driver-device-nodes-missing", "driver-uvm-missing"} & run.codes


def test_kernel_module_older_than_library_is_a_mismatch(host):
    run = host(root={"module": "535.104.05"})
    finding = run.find("nvml-driver-mismatch")
    assert finding["severity"] == "fail" and "535.104.05" in finding["title"] and "580.65.06" in finding["title"]
    assert "reboot" in finding["hint"].lower()
    assert run.status == 1


def test_nvml_mismatch_error_names_both_versions(host):
    run = host(host_config(init=18), root={"module": "535.104.05", "libs": ["usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15"]})
    finding = run.find("nvml-driver-mismatch")
    assert "kernel module 535.104.05" in finding["detail"] and "driver libraries 550.54.15" in finding["detail"]


def test_open_module_with_a_pre_turing_gpu(host):
    run = host(host_config(V100), root={"flavour": "open"})
    finding = run.find("driver-open-module-unsupported-gpu")
    assert finding["gpu_index"] == 0 and "sm_70" in finding["title"] and "proprietary" in finding["hint"]
    assert run.data["host"]["system"]["kernel_module"]["flavour"] == "open"


def test_open_module_with_a_turing_or_newer_gpu_is_fine(host):
    run = host(root={"flavour": "open"})
    assert "driver-open-module-unsupported-gpu" not in run.codes


def test_driver_present_but_nvml_missing(host):
    run = host(nvml_missing=True, libcuda={"version": 12040})
    finding = run.find("driver-nvml-missing")
    assert "libcuda.so.1 (CUDA 12.4) loads" in finding["detail"] and "kernel module 580.65.06" in finding["detail"]
    assert "NVIDIA_DRIVER_CAPABILITIES" in finding["hint"]
    assert run.find("nvml-library-missing")["hint"] == run.find("driver-nvml-missing")["hint"] and run.status == 1


def test_no_driver_at_all_is_told_apart(host):
    run = host(nvml_missing=True, root={"module": None, "nodes": ()})
    finding = run.find("no-driver")
    assert "0x10de:0x2330" in finding["detail"]
    assert "driver-nvml-missing" not in run.codes
    assert run.find("nvml-library-missing")["hint"] == run.find("no-driver")["hint"]


def test_amd_gpu_host_says_nvidia_only(host):
    run = host(nvml_missing=True, root={"module": None, "nodes": (), "pci": (AMD_MI300, ASPEED_BMC)})
    finding = run.find("no-nvidia-gpu")
    assert "AMD 0x1002:0x74a1" in finding["detail"] and "ROCm" in finding["hint"]
    assert "no-driver" not in run.codes
    assert run.find("nvml-library-missing")["hint"] == run.find("no-nvidia-gpu")["hint"]


def test_intel_gpu_host_says_nvidia_only(host):
    run = host(nvml_missing=True, root={"module": None, "nodes": (), "pci": (INTEL_ARC,)})
    assert "Intel 0x8086:0x56a0" in run.find("no-nvidia-gpu")["detail"]


def test_no_driver_without_any_gpu_on_the_bus(host):
    run = host(nvml_missing=True, root={"module": None, "nodes": (), "pci": ()})
    finding = run.find("no-driver")  # the kernel module is known to be absent
    assert "on the PCI bus" not in finding["detail"]
    assert run.find("nvml-library-missing")["hint"] == run.find("no-driver")["hint"]


# ---- device nodes and libraries ----------------------------------------------------------------


def test_missing_uvm_node_in_a_container_fails(host):
    run = host(root={"nodes": ("nvidiactl", "nvidia0"), "container": "docker"}, env={"NVIDIA_VISIBLE_DEVICES": "all"})
    finding = run.find("driver-uvm-missing")
    assert "modprobe nvidia-uvm" in finding["hint"] and "module is not loaded" in finding["detail"]
    assert finding["severity"] == "fail" and run.status == 1


def test_missing_uvm_node_on_a_host_warns(host):
    # libcuda creates it through nvidia-modprobe at first use, when that works.
    finding = host(root={"nodes": ("nvidiactl", "nvidia0")}).find("driver-uvm-missing")
    assert finding["severity"] == "warn" and "nvidia-modprobe" in finding["detail"]


def test_missing_device_nodes_on_a_host(host):
    run = host(root={"nodes": ("nvidia-uvm",)})
    finding = run.find("driver-device-nodes-missing")
    assert "/dev/nvidiactl" in finding["title"] and "/dev/nvidia0" in finding["title"]
    assert finding["severity"] == "warn"


def test_stubs_directory_on_ld_library_path(host):
    run = host(env={"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"})
    finding = run.find("env-cuda-stubs-on-path")
    assert finding["severity"] == "warn" and "/usr/local/cuda/lib64/stubs" in finding["detail"]


def test_stub_libcuda_loaded(host):
    run = host(libcuda={"version_rc": 34})
    finding = run.find("driver-stub-libcuda")
    assert "stub" in finding["detail"] and run.status == 1
    assert run.data["host"]["system"]["libcuda"]["error_code"] == 34


# ---- forward compatibility ---------------------------------------------------------------------


def test_data_center_gpu_on_old_branch_can_use_cuda_compat(host):
    # R535 was a live Long Term Support Branch until June 2026 (NVIDIA's data-center driver pages,
    # 615 edition): on a date before that, cuda-compat-13-0 is the way.
    run = host(host_config(driver="535.104.05", cuda=12020), root={"module": "535.104.05"}, env={"CUDADOCTOR_TODAY": "2026-05-01"},
               args=("--torch", "2.14", "--variant", "cu130"))
    assert "driver-too-old" in run.codes
    finding = run.find("driver-forward-compat-available")
    assert "cuda-compat-13-0" in finding["title"] and "cuda-compat-13-0" in finding["hint"]


def test_data_center_gpu_on_an_end_of_life_branch_is_told_to_upgrade(host):
    run = host(host_config(driver="535.104.05", cuda=12020), root={"module": "535.104.05"}, env={"CUDADOCTOR_TODAY": "2026-12-01"},
               args=("--torch", "2.14", "--variant", "cu130"))
    finding = run.find("driver-forward-compat-unavailable")
    assert "R535 is no longer a supported branch" in finding["title"] and "end of life June 2026" in finding["detail"]


def test_consumer_gpu_cannot_use_cuda_compat(host):
    run = host(host_config(RTX4090, driver="535.104.05", cuda=12020), root={"module": "535.104.05"}, args=("--torch", "2.14", "--variant", "cu130"))
    finding = run.find("driver-forward-compat-unavailable")
    assert "forward compatibility was attempted on non supported HW" in finding["detail"]


def test_active_cuda_compat_on_data_center_gpu(host):
    run = host(host_config(driver="535.104.05", cuda=12020), root={"module": "535.104.05"}, libcuda={"version": 12080})
    assert "CUDA 12.8" in run.find("driver-forward-compat-active")["title"]


def test_active_cuda_compat_on_consumer_gpu_is_error_804(host):
    run = host(host_config(RTX4090, driver="535.104.05", cuda=12020), root={"module": "535.104.05"}, libcuda={"version": 12080})
    finding = run.find("driver-forward-compat-unsupported-gpu")
    assert finding["severity"] == "fail" and "804" in finding["detail"]


# ---- GPU health --------------------------------------------------------------------------------


def test_lost_gpu(host):
    run = host(host_config({}, {}, **{"gpu1.lost": 1}))
    finding = run.find("gpu-lost")
    assert finding["gpu_index"] == 1 and run.status == 1


@pytest.mark.parametrize(
    "key, code, severity",
    [
        ("gpu0.remap_failure", "gpu-row-remap-failure", "fail"),
        ("gpu0.ecc_uncorrected", "gpu-ecc-uncorrectable", "fail"),
        ("gpu0.remap_pending", "gpu-row-remap-pending", "warn"),
        ("gpu0.retired_pending", "gpu-retired-pages-pending", "warn"),
    ],
)
def test_memory_health(host, key, code, severity):
    run = host(host_config(**{key: 2}))
    assert run.find(code)["severity"] == severity


def test_persistence_off_is_information(host):
    run = host(host_config({"persistence": 0}))
    assert run.find("gpu-persistence-off")["severity"] == "info"
    assert run.status == 0


# ---- visibility --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "-1", "2", "0,0"])
def test_cuda_visible_devices_hiding_every_gpu(host, value):
    run = host(host_config({}, {}), env={"CUDA_VISIBLE_DEVICES": value})
    finding = run.find("env-visible-devices-none")
    assert finding["severity"] == "fail" and "no CUDA-capable device is detected" in finding["detail"]
    assert not {"gpu-ok", "no-gpu", "gpu-arch-ok"} & run.codes


def test_cuda_visible_devices_out_of_range_entries_are_ignored(host):
    run = host(host_config({}, {}), env={"CUDA_VISIBLE_DEVICES": "1,7,0"})
    assert "'7'" in run.find("env-visible-devices-ignored")["title"]
    assert "cuda:0 = GPU 1" in run.find("env-visible-devices")["detail"]
    assert [f["gpu_index"] for f in run.all("gpu-ok")] == [1]


def test_cuda_visible_devices_by_uuid(host):
    uuid = nvml_stub.gpu_config(1)["gpu1.uuid"]
    run = host(host_config({}, {}), env={"CUDA_VISIBLE_DEVICES": uuid[:12]})
    assert [f["gpu_index"] for f in run.all("gpu-ok")] == [1]


def test_mixed_gpus_judged_per_gpu_and_the_hint_hides_the_blocker(host):
    run = host(host_config(K80, {}), root={"pci": ()}, args=("--torch", "2.15"))  # 2.15 carries no K80 code
    blocked = [f for f in run.all("gpu-arch-not-built")]
    assert [f["gpu_index"] for f in blocked] == [0]
    assert "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1" in blocked[0]["hint"]
    assert [f["gpu_index"] for f in run.all("gpu-arch-ok")] == [1]


def test_hiding_the_blocking_gpu_clears_it(host):
    run = host(host_config(K80, {}), env={"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert "gpu-arch-not-built" not in run.codes
    assert "env-device-order-ambiguous" not in run.codes


def test_indexes_over_mixed_gpus_without_pci_order(host):
    run = host(host_config(K80, {}), env={"CUDA_VISIBLE_DEVICES": "1"})
    assert "PCI_BUS_ID" in run.find("env-device-order-ambiguous")["hint"]


def test_hint_uses_physical_ordinals_of_the_visible_gpus(host):
    run = host(host_config({}, V100, {}), env={"CUDA_VISIBLE_DEVICES": "1,2", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, args=("--torch", "2.14", "--variant", "cu130"))
    blocked = run.find("gpu-arch-not-built")
    assert blocked["gpu_index"] == 1 and "CUDA_VISIBLE_DEVICES=2." in blocked["hint"]


# ---- containers, WSL, MIG ----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["void", "", "none"])
def test_container_started_without_gpus(host, value):
    run = host(nvml_missing=True, root={"container": "docker", "nodes": ()}, env={"NVIDIA_VISIBLE_DEVICES": value})
    finding = run.find("container-no-gpus")
    assert "--gpus all" in finding["hint"]
    assert run.find("nvml-library-missing")["hint"] == run.find("container-no-gpus")["hint"]


def test_container_without_device_nodes(host):
    run = host(nvml_missing=True, root={"container": "kubepods", "nodes": ()})
    assert "no /dev/nvidiactl" in run.find("container-no-gpus")["detail"]
    assert run.data["host"]["system"]["container_runtime"] == "kubernetes"


def test_container_with_gpus(host):
    run = host(root={"container": "podman"}, env={"NVIDIA_VISIBLE_DEVICES": "all"})
    assert "podman" in run.find("container-detected")["title"]
    assert run.status == 0


def test_wsl_detected(host):
    run = host(root={"wsl": True, "module": None, "nodes": (), "pci": ()})
    assert "Windows" in run.find("wsl-detected")["detail"]
    assert not {"driver-device-nodes-missing", "driver-uvm-missing"} & run.codes


def test_wsl_without_gpu_support(host):
    run = host(nvml_missing=True, root={"wsl": True, "wsl_dxg": False, "wsl_libs": False, "module": None, "nodes": (), "pci": ()})
    assert "/dev/dxg" in run.find("wsl-no-gpu-support")["title"]
    assert run.find("nvml-library-missing")["hint"] == run.find("wsl-no-gpu-support")["hint"]


def test_linux_driver_installed_inside_wsl(host):
    run = host(root={"wsl": True, "module": None, "nodes": (), "pci": (), "libs": ["usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"]})
    assert "550.54.15" in run.find("wsl-linux-driver-installed")["detail"]


def _mig_config(count: int) -> dict:
    extra = {"gpu0.mig": 1, "gpu0.mig.count": count}
    for slot in range(count):
        extra[f"gpu0.mig{slot}.uuid"] = f"MIG-1111111{slot}-2222-3333-4444-555555555555"
        extra[f"gpu0.mig{slot}.name"] = "NVIDIA H100 80GB HBM3 MIG 3g.40gb"
        extra[f"gpu0.mig{slot}.memory"] = 42949672960
    return host_config(**extra)


def test_mig_instances_are_listed(host):
    run = host(_mig_config(2))
    finding = run.find("mig-instances")
    assert "2 MIG instance" in finding["title"] and "40.0 GiB" in finding["detail"]


def test_mig_mode_without_instances(host):
    assert host(_mig_config(0)).find("mig-no-instances")["severity"] == "fail"


def test_mig_instance_selected_by_id(host):
    run = host(_mig_config(2), env={"CUDA_VISIBLE_DEVICES": "MIG-11111111"}, args=("--min-memory", "48GiB"))
    assert "cuda:0 = MIG" in run.find("env-visible-devices")["detail"]
    assert "40.0 GiB" in run.find("gpu-memory-low")["title"]


# ---- memory and capabilities -------------------------------------------------------------------


def test_min_memory(host):
    run = host(host_config({}, RTX4090), args=("--min-memory", "32GiB"))
    assert [f["gpu_index"] for f in run.all("gpu-memory-low")] == [1]
    assert run.status == 0  # a warning


def test_bad_min_memory_is_a_usage_error(host):
    run = host(args=("--min-memory", "lots"))
    assert run.status == 2
    assert run.stderr.strip().splitlines() == [
        "cudadoctor: error: --min-memory: 'lots' is not a size: expected a number with a unit such as 16GiB, 24GB, 8192MiB or 80G"
    ]


def test_capabilities_are_information(host):
    run = host(host_config(V100))
    finding = run.find("gpu-capabilities")
    assert "tensor cores" in finding["detail"] and "bf16 (needs >= 8.0)" in finding["detail"]
    assert finding["severity"] == "info"
