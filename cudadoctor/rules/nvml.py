"""Can NVML talk to an NVIDIA driver at all?"""

from __future__ import annotations

from typing import Optional

from ..facts import (
    NVML_DRIVER_MISMATCH,
    NVML_DRIVER_NOT_LOADED,
    NVML_LIBRARY_MISSING,
    NVML_NO_PERMISSION,
    NVML_NOT_PROBED,
    NVML_OK,
    HostFacts,
)
from ..findings import FAIL, OK, Finding
from ..table import CompatTable
from ..target import Target
from .system import missing_nvml_case, user_space_versions

SOURCE = "NVML (nvidia-ml-py) on this host"
# missing_nvml_case() -> the finding that names that cause.
_CAUSE_CODES = {
    "container": "container-no-gpus",
    "wsl": "wsl-no-gpu-support",
    "partial": "driver-nvml-missing",
    "non-nvidia": "no-nvidia-gpu",
    "none": "no-driver",
}


def check_nvml(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    d = facts.driver
    state = d.nvml_state
    error = f" NVML said: {d.nvml_error}." if d.nvml_error else ""
    if state == NVML_OK:
        if d.source == "what-if":
            title = f"NVIDIA driver {d.driver_version} (given with --driver)"
        else:
            title = f"NVIDIA driver {d.driver_version or 'of unknown version'} answers through NVML"
        detail = f"The driver supports CUDA up to {d.cuda_driver_version}." if d.cuda_driver_version else ""
        return [Finding("nvml-ok", OK, title, detail, "", SOURCE, "nvml")]
    if state == NVML_NOT_PROBED:
        return []
    if state == NVML_LIBRARY_MISSING:
        # Always reported (scripts match on it); when the system facts tell the cause apart (container
        # without --gpus, WSL, partial driver, no driver, another vendor's GPU) that finding follows.
        cause = _CAUSE_CODES.get(missing_nvml_case(facts) or "")
        see = f" The cause is diagnosed below: {cause}." if cause else ""
        return [
            Finding(
                "nvml-library-missing",
                FAIL,
                "No NVIDIA driver found: libnvidia-ml.so.1 cannot be loaded",
                "NVML ships with the NVIDIA driver. Without it there is no driver on this host, or this is a "
                "container started without GPU access." + error + see,
                f"See {cause} for the fix." if cause else (
                    "Install the NVIDIA driver for your GPU, or start the container with `--gpus all` (NVIDIA "
                    "Container Toolkit). To plan for another machine, pass --driver VERSION and --gpu MODEL."
                ),
                SOURCE,
                "nvml",
            )
        ]
    if state == NVML_DRIVER_NOT_LOADED:
        return [
            Finding(
                "nvml-driver-not-loaded",
                FAIL,
                "The NVIDIA kernel driver is not loaded",
                "NVML's library is installed but the nvidia kernel module is not running (nvidia-smi says "
                "\"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\")." + error,
                "Load it with `sudo modprobe nvidia`; if that fails, read `sudo dmesg | grep -i nvidia` "
                "(Secure Boot blocking an unsigned module, or a module not built for the running kernel: "
                "reinstall the driver / DKMS package).",
                SOURCE,
                "nvml",
            )
        ]
    if state == NVML_DRIVER_MISMATCH:
        return [
            Finding(
                "nvml-driver-mismatch",
                FAIL,
                "NVML library and kernel module versions differ",
                "\"Failed to initialize NVML: Driver/library version mismatch\": the user-space driver was "
                "upgraded but the old kernel module is still loaded." + error + _versions_seen(facts),
                "Reboot, or unload and reload the modules (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset "
                "nvidia && sudo modprobe nvidia`) with no GPU process running.",
                SOURCE,
                "nvml",
            )
        ]
    hint = "Run `nvidia-smi` to see the same error; check the driver installation and `dmesg`."
    if state == NVML_NO_PERMISSION:
        hint = (
            "The user cannot open the NVIDIA device nodes: check the permissions of /dev/nvidia* "
            "(and, in a container, that the devices were passed in)."
        )
    return [
        Finding(
            "nvml-error",
            FAIL,
            "NVML could not be initialised",
            ("NVML reported an error while starting." + error).strip(),
            hint,
            SOURCE,
            "nvml",
        )
    ]


def _versions_seen(facts: HostFacts) -> str:
    """The two sides of the mismatch, when the system probe saw them."""
    if facts.system is None:
        return ""
    module = facts.system.kernel_module.version
    libraries = user_space_versions(facts.system)
    parts = []
    if module:
        parts.append(f"kernel module {module}")
    if libraries:
        parts.append(f"driver libraries {', '.join(libraries)}")
    return f" Seen here: {'; '.join(parts)}." if parts else ""
