"""What the OS facts say about a host without a working NVML: is there a driver at all, is this a
container started without GPUs, a WSL without GPU support, a host with another vendor's GPUs.
Pure helpers over the facts, shared by the NVML, kernel and environment checks."""

from __future__ import annotations

from ..model.facts import NVML_LIBRARY_MISSING, SystemFacts, driver_library_version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from .view import HostView


COMPUTE_VENDORS = ("amd", "intel")

def gpu_request_missing(system: SystemFacts) -> bool:
    """Inside a container: no GPU was passed in (no --gpus, or NVIDIA_VISIBLE_DEVICES empty/void/none)."""
    if not system.in_container or system.wsl:
        return False
    requested = system.env("NVIDIA_VISIBLE_DEVICES")
    if requested is not None and requested.strip().lower() in ("", "void", "none"):
        return True
    nodes = system.device_nodes
    return nodes.nvidiactl is False and not nodes.gpu_nodes

def driver_evidence(system: SystemFacts) -> list[str]:
    """What says an NVIDIA driver is installed, NVML aside."""
    evidence = []
    module = system.kernel_module
    if module.loaded:
        evidence.append(f"the nvidia kernel module{' ' + module.version if module.version else ''} is loaded")
    if system.libcuda.loadable:
        version = f" (CUDA {system.libcuda.driver_version})" if system.libcuda.driver_version else ""
        evidence.append(f"libcuda.so.1{version} loads")
    if system.device_nodes.nvidiactl:
        evidence.append("/dev/nvidiactl exists")
    return evidence

def non_nvidia_gpus(system: SystemFacts) -> list[str]:
    vendors = [d for d in system.pci_display_devices if d.vendor in COMPUTE_VENDORS]
    if any(d.vendor == "nvidia" for d in system.pci_display_devices):
        return []
    return [f"{d.vendor.upper() if d.vendor == 'amd' else d.vendor.title()} {d.vendor_id}:{d.device_id or '?'} at {d.address}" for d in vendors]

def missing_nvml_case(host: "HostView") -> Optional[str]:
    """Which finding explains a missing libnvidia-ml.so.1 better than `nvml-library-missing`:
    ``container`` | ``wsl`` | ``partial`` | ``non-nvidia`` | ``none``; None to keep the plain one."""
    system = host.system
    if system is None or host.facts.driver.nvml_state != NVML_LIBRARY_MISSING:
        return None
    if system.wsl:
        return "wsl" if not (system.wsl_gpu_libs and system.wsl_dxg) else None
    if gpu_request_missing(system):
        return "container"
    if driver_evidence(system):
        return "partial"
    if non_nvidia_gpus(system):
        return "non-nvidia"
    if system.kernel_module.loaded is False:
        return "none"
    return None

def user_space_versions(system: SystemFacts) -> list[str]:
    return sorted({v for v in (driver_library_version(p) for p in system.driver_libraries) if v})
