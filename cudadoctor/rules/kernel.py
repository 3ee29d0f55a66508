"""Kernel module and devices: the loaded nvidia module (its version against NVML's, open or
proprietary flavour) and the device nodes CUDA opens."""

from __future__ import annotations

from ..host.diagnosis import gpu_request_missing
from ..host.view import gpu_label
from ..model.findings import FAIL, WARN, Finding
from .context import CheckContext
from .sources import OS_PROBE_SOURCE

# The table's feature row for the open kernel modules (Turing and newer: they need the GSP).
OPEN_MODULE_FEATURE = "open GPU kernel modules"


def check_kernel_module(ctx: CheckContext) -> list[Finding]:
    host, facts, table = ctx.host, ctx.facts, ctx.table
    system = host.system
    if system is None or not facts.nvml_ok:
        return []
    module = system.kernel_module
    findings = []
    library = facts.driver.driver_version
    if module.version and library and module.version != library:
        findings.append(
            Finding(
                code="nvml-driver-mismatch",
                severity=FAIL,
                title=f"Kernel module {module.version} and driver libraries {library} differ",
                detail=f"The loaded nvidia kernel module is {module.version} but NVML's library is {library}: the driver was "
                    "upgraded without a reboot. nvidia-smi says \"Failed to initialize NVML: Driver/library version "
                    "mismatch\" and CUDA fails with \"system has unsupported display driver / cuda driver combination\" "
                    "(error 803).",
                hint="Reboot, or unload and reload the modules (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia "
                    "&& sudo modprobe nvidia`) with no GPU process running.",
                source=OS_PROBE_SOURCE,
            )
        )
    open_modules = table.feature(OPEN_MODULE_FEATURE)
    if module.flavour == "open" and open_modules is not None:
        for gpu in facts.gpus:
            cc = host.cc(gpu)
            if cc is not None and cc < open_modules.min_cc:
                findings.append(
                    Finding(
                        code="driver-open-module-unsupported-gpu",
                        severity=FAIL,
                        title=f"{gpu_label(gpu)} ({cc.sm}) cannot run under the open kernel module",
                        detail="The loaded nvidia module is the open flavour (\"NVIDIA UNIX Open Kernel Module\"), which "
                            f"drives Turing ({open_modules.min_cc.sm}) and newer GPUs only; this GPU is older.",
                        hint="Install the proprietary kernel module flavour of the driver (e.g. the .run installer with "
                            "--kernel-module-type=proprietary, or your distribution's non-open driver package), then reboot.",
                        source=table.cite(open_modules.source),
                        gpu_index=gpu.index,
                    )
                )
    return findings


def check_device_nodes(ctx: CheckContext) -> list[Finding]:
    """Missing nodes fail in a container (nothing there can create them); on a host libcuda runs the
    setuid nvidia-modprobe to create them at first use, so they only warn that this must work."""
    host = ctx.host
    system = host.system
    if system is None or system.wsl or not system.kernel_module.loaded or gpu_request_missing(system):
        return []
    nodes = system.device_nodes
    contained = bool(system.in_container)
    severity = FAIL if contained else WARN
    later = (
        "" if contained else " On a host, CUDA runs nvidia-modprobe at first use to create missing nodes; if it is not "
        "installed or not allowed to load modules, CUDA fails."
    )
    findings = []
    missing = []
    if nodes.nvidiactl is False:
        missing.append("/dev/nvidiactl")
    if nodes.nvidiactl is not None and not nodes.gpu_nodes:
        missing.append("/dev/nvidia0 (one node per GPU)")
    if missing:
        findings.append(
            Finding(
                code="driver-device-nodes-missing",
                severity=severity,
                title="NVIDIA device nodes are missing: " + ", ".join(missing),
                detail="The nvidia kernel module is loaded but its device files are not here, so CUDA cannot open the "
                    "GPUs (\"no CUDA-capable device is detected\")." + later,
                hint="On the host run `sudo nvidia-modprobe -c 0 -u` (or `nvidia-smi` once as root) and check the driver "
                    "package's udev rules; in a container, pass the devices in (`--gpus all`).",
                source=OS_PROBE_SOURCE,
            )
        )
    if nodes.nvidia_uvm is False:
        module = " and the nvidia_uvm module is not loaded" if system.kernel_module.uvm_loaded is False else ""
        findings.append(
            Finding(
                code="driver-uvm-missing",
                severity=severity,
                title="/dev/nvidia-uvm is missing: CUDA fails while nvidia-smi works",
                detail=f"The node for nvidia_uvm (CUDA's unified memory) is missing{module}. nvidia-smi does not need it, "
                    "CUDA does: cuInit fails with \"unknown error\" (999) and torch reports \"CUDA unknown error\" or "
                    "is_available() is False." + later,
                hint="Load it with `sudo modprobe nvidia-uvm` and create the node with `sudo nvidia-modprobe -u -c=0`; "
                    "in a container, restart it after fixing the host.",
                source=OS_PROBE_SOURCE,
            )
        )
    return findings
