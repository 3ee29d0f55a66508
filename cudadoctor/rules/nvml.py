"""Driver (NVML): can NVML talk to an NVIDIA driver at all, and when it cannot, why not (no driver,
a partial driver, another vendor's GPUs)."""

from __future__ import annotations

from ..host.diagnosis import driver_evidence, missing_nvml_case, non_nvidia_gpus, user_space_versions
from ..model.facts import (
    NVML_BAD_DEVICE_COUNT,
    NVML_CRASHED,
    NVML_HUNG,
    NVML_DRIVER_MISMATCH,
    NVML_DRIVER_NOT_LOADED,
    NVML_LIBRARY_MISSING,
    NVML_NO_PERMISSION,
    NVML_NOT_PROBED,
    NVML_OK,
    HostFacts,
)
from ..model.findings import FAIL, OK, Finding
from .context import CheckContext
from .environment import CONTAINER_NO_GPUS_HINT, WSL_NO_GPU_HINT
from .sources import NVML_SOURCE, OS_PROBE_SOURCE

# missing_nvml_case() -> the finding that names that cause.
_CAUSE_CODES = {
    "container": "container-no-gpus",
    "wsl": "wsl-no-gpu-support",
    "partial": "driver-nvml-missing",
    "non-nvidia": "no-nvidia-gpu",
    "none": "no-driver",
}
PARTIAL_DRIVER_HINT = (
    "In a container, set NVIDIA_DRIVER_CAPABILITIES=compute,utility (utility mounts NVML and nvidia-smi) or start "
    "the container with `docker run --gpus all IMAGE`; on a host, reinstall the driver's user-space package that "
    "matches the kernel module."
)
NON_NVIDIA_HINT = "For AMD GPUs use PyTorch's ROCm builds; for Intel GPUs its XPU builds. Or run on a host with an NVIDIA GPU."
NO_DRIVER_HINT = (
    "Install the NVIDIA driver for your GPU (your distribution's package or NVIDIA's), then reboot. To plan for "
    "another machine, pass --driver VERSION and --gpu MODEL."
)
# Each cause's own fix, which nvml-library-missing repeats: the first failing finding says what to do.
_CAUSE_HINTS = {
    "container": CONTAINER_NO_GPUS_HINT,
    "wsl": WSL_NO_GPU_HINT,
    "partial": PARTIAL_DRIVER_HINT,
    "non-nvidia": NON_NVIDIA_HINT,
    "none": NO_DRIVER_HINT,
}


def check_nvml(ctx: CheckContext) -> list[Finding]:
    host, facts = ctx.host, ctx.facts
    d = facts.driver
    state = d.nvml_state
    error = f" NVML said: {d.nvml_error}." if d.nvml_error else ""
    if state == NVML_OK:
        if d.source == "what-if":
            title = f"NVIDIA driver {d.driver_version} (given with --driver)"
        else:
            title = f"NVIDIA driver {d.driver_version or 'of unknown version'} answers through NVML"
        detail = f"The driver supports CUDA up to {d.cuda_driver_version}." if d.cuda_driver_version else ""
        return [Finding(code="nvml-ok", severity=OK, title=title, detail=detail, source=NVML_SOURCE)]
    if state == NVML_NOT_PROBED:
        return []
    if state == NVML_LIBRARY_MISSING:
        # Always reported (scripts match on it); when the system facts tell the cause apart (container
        # without --gpus, WSL, partial driver, no driver, another vendor's GPU) that finding follows.
        case = missing_nvml_case(host) or ""
        cause = _CAUSE_CODES.get(case)
        see = f" The cause is diagnosed below: {cause}." if cause else ""
        return [
            Finding(
                code="nvml-library-missing",
                severity=FAIL,
                title="No NVIDIA driver found: libnvidia-ml.so.1 cannot be loaded",
                detail="NVML ships with the NVIDIA driver. Without it there is no driver on this host, or this is a "
                    "container started without GPU access." + error + see,
                hint=_CAUSE_HINTS.get(case) or (
                        "Install the NVIDIA driver for your GPU, or start the container with GPU access (`docker run "
                        "--gpus all IMAGE`, NVIDIA Container Toolkit). To plan for another machine, pass --driver "
                        "VERSION and --gpu MODEL."
                    ),
                source=NVML_SOURCE,
            )
        ]
    if state == NVML_DRIVER_NOT_LOADED:
        return [
            Finding(
                code="nvml-driver-not-loaded",
                severity=FAIL,
                title="The NVIDIA kernel driver is not loaded",
                detail="NVML's library is installed but the nvidia kernel module is not running (nvidia-smi says "
                    "\"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver\")." + error,
                hint="Load it with `sudo modprobe nvidia`; if that fails, read `sudo dmesg | grep -i nvidia` "
                    "(Secure Boot blocking an unsigned module, or a module not built for the running kernel: "
                    "reinstall the driver / DKMS package).",
                source=NVML_SOURCE,
            )
        ]
    if state == NVML_DRIVER_MISMATCH:
        return [
            Finding(
                code="nvml-driver-mismatch",
                severity=FAIL,
                title="NVML library and kernel module versions differ",
                detail="\"Failed to initialize NVML: Driver/library version mismatch\": the user-space driver was "
                    "upgraded but the old kernel module is still loaded." + error + _versions_seen(facts),
                hint="Reboot, or unload and reload the modules (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset "
                    "nvidia && sudo modprobe nvidia`) with no GPU process running.",
                source=NVML_SOURCE,
            )
        ]
    if state in _WATCHDOG:
        return [_WATCHDOG[state](error)]
    hint = "Run `nvidia-smi` to see the same error; check the driver installation and `dmesg`."
    if state == NVML_NO_PERMISSION:
        hint = (
            "The user cannot open the NVIDIA device nodes: check the permissions of /dev/nvidia* "
            "(and, in a container, that the devices were passed in)."
        )
    return [
        Finding(
            code="nvml-error",
            severity=FAIL,
            title="NVML could not be initialised",
            detail=("NVML reported an error while starting." + error).strip(),
            hint=hint,
            source=NVML_SOURCE,
        )
    ]


_WEDGED_HINT = (
    "Look for Xid errors in `sudo dmesg | grep -i -e xid -e nvrm` (Xid 79: the GPU has fallen off the bus); "
    "`nvidia-smi` will likely hang or fail the same way. Reset the GPU (`sudo nvidia-smi --gpu-reset -i N` "
    "with nothing running on it) or reboot; if it recurs, check the GPU's power, cooling and PCIe seating."
)


def _hung(error: str) -> Finding:
    return Finding(
        code="nvml-hung",
        severity=FAIL,
        title="The NVIDIA driver did not answer: an NVML call hung",
        detail="Reading the driver through NVML did not finish within --nvml-timeout, so the probe was stopped; "
            "the other probes below still ran. A driver that blocks like this is wedged: typically a GPU that has "
            "fallen off the bus, a GPU in a bad state after an Xid error, or a driver upgrade half done." + error,
        hint=_WEDGED_HINT + " A slow host may only need a longer --nvml-timeout.",
        source=NVML_SOURCE,
    )


def _crashed(error: str) -> Finding:
    return Finding(
        code="nvml-crashed",
        severity=FAIL,
        title="The NVIDIA driver library crashed while it was being read",
        detail="The NVML probe (a child process, so cudadoctor itself survived) died inside libnvidia-ml; the other "
            "probes below still ran. Programs that use NVML (nvidia-smi, CUDA's device queries) are likely to crash "
            "the same way: a broken or half-upgraded driver installation, or a GPU in a bad state." + error,
        hint=_WEDGED_HINT + " If dmesg is clean, reinstall the driver so that its libraries and kernel module match.",
        source=NVML_SOURCE,
    )


def _bad_count(error: str) -> Finding:
    return Finding(
        code="nvml-device-count-invalid",
        severity=FAIL,
        title="NVML reported an impossible number of GPUs",
        detail="nvmlDeviceGetCount answered a count no host has, so the GPUs were not read one by one (that "
            "would walk billions of handles). The driver is answering garbage." + error,
        hint="Compare with `nvidia-smi -L`; check `sudo dmesg` for Xid errors, and reboot or reinstall the driver.",
        source=NVML_SOURCE,
    )


_WATCHDOG = {NVML_HUNG: _hung, NVML_CRASHED: _crashed, NVML_BAD_DEVICE_COUNT: _bad_count}


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


def check_driver_presence(ctx: CheckContext) -> list[Finding]:
    host, facts = ctx.host, ctx.facts
    case = missing_nvml_case(host)
    system = facts.system
    if case == "partial" and system is not None:
        nodes = system.device_nodes
        return [
            Finding(
                code="driver-nvml-missing",
                severity=FAIL,
                title="An NVIDIA driver is present but NVML (libnvidia-ml.so.1) is missing",
                detail="There is a driver here (" + "; ".join(driver_evidence(system)) + ") but libnvidia-ml.so.1 cannot be "
                    "loaded, so nvidia-smi fails (\"NVIDIA-SMI couldn't find libnvidia-ml.so library in your system\"). "
                    "Typical of a container whose driver mount is partial, or of a broken driver installation."
                    + ("" if nodes.nvidia_uvm is not False else " /dev/nvidia-uvm is missing too."),
                hint=PARTIAL_DRIVER_HINT,
                source=OS_PROBE_SOURCE,
            )
        ]
    if case == "non-nvidia" and system is not None:
        found = non_nvidia_gpus(system)
        return [
            Finding(
                code="no-nvidia-gpu",
                severity=FAIL,
                title="No NVIDIA GPU: this host's GPUs are from another vendor",
                detail=f"The PCI bus shows {', '.join(found)} and no NVIDIA device. cudadoctor checks NVIDIA CUDA "
                    "only; CUDA builds of PyTorch cannot use these GPUs (torch.cuda.is_available() is False).",
                hint=NON_NVIDIA_HINT,
                source="/sys/bus/pci/devices (PCI vendor ids 0x1002/0x1022 AMD, 0x8086 Intel, 0x10de NVIDIA)",
            )
        ]
    if case == "none" and system is not None:
        nvidia = [d for d in system.pci_display_devices if d.vendor == "nvidia"]
        seen = f"An NVIDIA GPU is on the PCI bus ({nvidia[0].vendor_id}:{nvidia[0].device_id} at {nvidia[0].address}) but " if nvidia else ""
        return [
            Finding(
                code="no-driver",
                severity=FAIL,
                title="No NVIDIA driver is installed",
                detail=seen + "no nvidia kernel module is loaded, libcuda.so.1 and libnvidia-ml.so.1 cannot be loaded and "
                    "there is no /dev/nvidiactl. CUDA programs fail with \"no CUDA-capable device is detected\" or "
                    "\"Found no NVIDIA driver on your system\" (torch).",
                hint=NO_DRIVER_HINT,
                source=OS_PROBE_SOURCE,
            )
        ]
    return []
