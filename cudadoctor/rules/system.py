"""The driver as the operating system shows it: kernel module, device nodes, libcuda, stubs,
forward compatibility, and hosts with no NVIDIA driver or no NVIDIA GPU at all."""

from __future__ import annotations

from typing import Optional

from ..facts import NVML_LIBRARY_MISSING, GpuFacts, HostFacts, SystemFacts, driver_library_version
from ..findings import FAIL, INFO, WARN, Finding
from ..hostview import driver_support, driver_version, gpu_cc, gpu_label, gpus_in_scope
from ..table import CompatTable
from ..target import Target
from ..versions import CudaVersion, VersionError

PROBE = "/proc/driver/nvidia, /sys/module/nvidia, /dev, libcuda.so.1 on this host"
# The table's feature row for the open kernel modules (Turing and newer: they need the GSP).
OPEN_MODULE_FEATURE = "open GPU kernel modules"
CUDA_ERROR_STUB_LIBRARY = 34
# NVML brand names (probe.nvml.BRAND_NAMES) that settle the GPU class when the catalogue does not know the model.
_BRAND_CLASS = {"tesla": "data-center", "geforce": "consumer", "geforcertx": "consumer", "titan": "consumer", "titanrtx": "consumer"}
COMPUTE_VENDORS = ("amd", "intel")


def probed_host(facts: HostFacts) -> Optional[SystemFacts]:
    """The system facts, when they describe the host being judged (not a --driver what-if)."""
    if facts.system is None or facts.driver.source == "what-if":
        return None
    return facts.system


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


def missing_nvml_case(facts: HostFacts) -> Optional[str]:
    """Which finding explains a missing libnvidia-ml.so.1 better than `nvml-library-missing`:
    ``container`` | ``wsl`` | ``partial`` | ``non-nvidia`` | ``none``; None to keep the plain one."""
    system = probed_host(facts)
    if system is None or facts.driver.nvml_state != NVML_LIBRARY_MISSING:
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


def check_driver_presence(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    case = missing_nvml_case(facts)
    system = facts.system
    if case == "partial" and system is not None:
        nodes = system.device_nodes
        return [
            Finding(
                "driver-nvml-missing",
                FAIL,
                "An NVIDIA driver is present but NVML (libnvidia-ml.so.1) is missing",
                "There is a driver here (" + "; ".join(driver_evidence(system)) + ") but libnvidia-ml.so.1 cannot be "
                "loaded, so nvidia-smi fails (\"NVIDIA-SMI couldn't find libnvidia-ml.so library in your system\"). "
                "Typical of a container whose driver mount is partial, or of a broken driver installation."
                + ("" if nodes.nvidia_uvm is not False else " /dev/nvidia-uvm is missing too."),
                "In a container, set NVIDIA_DRIVER_CAPABILITIES=compute,utility (utility mounts NVML and nvidia-smi) "
                "or start it with `--gpus all`; on a host, reinstall the driver's user-space package that matches "
                "the kernel module.",
                PROBE,
                "driver",
            )
        ]
    if case == "non-nvidia" and system is not None:
        found = non_nvidia_gpus(system)
        return [
            Finding(
                "no-nvidia-gpu",
                FAIL,
                "No NVIDIA GPU: this host's GPUs are from another vendor",
                f"The PCI bus shows {', '.join(found)} and no NVIDIA device. cudadoctor checks NVIDIA CUDA "
                "only; CUDA builds of PyTorch cannot use these GPUs (torch.cuda.is_available() is False).",
                "For AMD GPUs use PyTorch's ROCm builds; for Intel GPUs its XPU builds. Or run on a host with "
                "an NVIDIA GPU.",
                "/sys/bus/pci/devices (PCI vendor ids 0x1002/0x1022 AMD, 0x8086 Intel, 0x10de NVIDIA)",
                "driver",
            )
        ]
    if case == "none" and system is not None:
        nvidia = [d for d in system.pci_display_devices if d.vendor == "nvidia"]
        seen = f"An NVIDIA GPU is on the PCI bus ({nvidia[0].vendor_id}:{nvidia[0].device_id} at {nvidia[0].address}) but " if nvidia else ""
        return [
            Finding(
                "no-driver",
                FAIL,
                "No NVIDIA driver is installed",
                seen + "no nvidia kernel module is loaded, libcuda.so.1 and libnvidia-ml.so.1 cannot be loaded and "
                "there is no /dev/nvidiactl. CUDA programs fail with \"no CUDA-capable device is detected\" or "
                "\"Found no NVIDIA driver on your system\" (torch).",
                "Install the NVIDIA driver for your GPU (your distribution's package or NVIDIA's), then reboot. "
                "To plan for another machine, pass --driver VERSION and --gpu MODEL.",
                PROBE,
                "driver",
            )
        ]
    return []


def check_kernel_module(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    system = probed_host(facts)
    if system is None or not facts.nvml_ok:
        return []
    module = system.kernel_module
    findings = []
    library = facts.driver.driver_version
    if module.version and library and module.version != library:
        findings.append(
            Finding(
                "nvml-driver-mismatch",
                FAIL,
                f"Kernel module {module.version} and driver libraries {library} differ",
                f"The loaded nvidia kernel module is {module.version} but NVML's library is {library}: the driver was "
                "upgraded without a reboot. nvidia-smi says \"Failed to initialize NVML: Driver/library version "
                "mismatch\" and CUDA fails with \"system has unsupported display driver / cuda driver combination\" "
                "(error 803).",
                "Reboot, or unload and reload the modules (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia "
                "&& sudo modprobe nvidia`) with no GPU process running.",
                PROBE,
                "driver",
            )
        )
    open_modules = table.feature(OPEN_MODULE_FEATURE)
    if module.flavour == "open" and open_modules is not None:
        for gpu in facts.gpus:
            cc = gpu_cc(gpu, table)
            if cc is not None and cc < open_modules.min_cc:
                findings.append(
                    Finding(
                        "driver-open-module-unsupported-gpu",
                        FAIL,
                        f"{gpu_label(gpu)} ({cc.sm}) cannot run under the open kernel module",
                        "The loaded nvidia module is the open flavour (\"NVIDIA UNIX Open Kernel Module\"), which "
                        f"drives Turing ({open_modules.min_cc.sm}) and newer GPUs only; this GPU is older.",
                        "Install the proprietary kernel module flavour of the driver (e.g. the .run installer with "
                        "--kernel-module-type=proprietary, or your distribution's non-open driver package), then reboot.",
                        table.cite(open_modules.source),
                        "driver",
                        gpu.index,
                    )
                )
    return findings


def check_device_nodes(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    """Missing nodes fail in a container (nothing there can create them); on a host libcuda runs the
    setuid nvidia-modprobe to create them at first use, so they only warn that this must work."""
    system = probed_host(facts)
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
                "driver-device-nodes-missing",
                severity,
                "NVIDIA device nodes are missing: " + ", ".join(missing),
                "The nvidia kernel module is loaded but its device files are not here, so CUDA cannot open the "
                "GPUs (\"no CUDA-capable device is detected\")." + later,
                "On the host run `sudo nvidia-modprobe -c 0 -u` (or `nvidia-smi` once as root) and check the driver "
                "package's udev rules; in a container, pass the devices in (`--gpus all`).",
                PROBE,
                "driver",
            )
        )
    if nodes.nvidia_uvm is False:
        module = " and the nvidia_uvm module is not loaded" if system.kernel_module.uvm_loaded is False else ""
        findings.append(
            Finding(
                "driver-uvm-missing",
                severity,
                "/dev/nvidia-uvm is missing: CUDA fails while nvidia-smi works",
                f"The node for nvidia_uvm (CUDA's unified memory) is missing{module}. nvidia-smi does not need it, "
                "CUDA does: cuInit fails with \"unknown error\" (999) and torch reports \"CUDA unknown error\" or "
                "is_available() is False." + later,
                "Load it with `sudo modprobe nvidia-uvm` and create the node with `sudo nvidia-modprobe -u -c=0`; "
                "in a container, restart it after fixing the host.",
                PROBE,
                "driver",
            )
        )
    return findings


def check_libcuda(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    system = probed_host(facts)
    if system is None:
        return []
    libcuda = system.libcuda
    stub_loaded = libcuda.error_code == CUDA_ERROR_STUB_LIBRARY or "/stubs/" in (libcuda.path or "")
    if stub_loaded:
        return [
            Finding(
                "driver-stub-libcuda",
                FAIL,
                "libcuda.so.1 resolves to the CUDA toolkit's link-time stub, not the driver",
                f"The loader picks {libcuda.path or 'a stub libcuda.so.1'}, which exists only for linking: every "
                "call fails with \"CUDA driver is a stub library\" (34) or \"CUDA driver version is insufficient for "
                "CUDA runtime version\", even on a good driver.",
                "Remove the toolkit's stubs directory from LD_LIBRARY_PATH (and any libcuda.so.1 link made inside "
                "it); keep it on LIBRARY_PATH for linking only.",
                PROBE,
                "environment",
            )
        ]
    if system.ld_library_path_stubs:
        return [
            Finding(
                "env-cuda-stubs-on-path",
                WARN,
                "A CUDA stubs directory is on LD_LIBRARY_PATH",
                f"LD_LIBRARY_PATH contains {', '.join(system.ld_library_path_stubs)}. Those libraries are link-time "
                "stand-ins; if one of them is found before the driver's libcuda.so.1, CUDA reports \"CUDA driver "
                "version is insufficient for CUDA runtime version\" on a good driver.",
                "Remove it from LD_LIBRARY_PATH; link against it with LIBRARY_PATH or -L instead.",
                "LD_LIBRARY_PATH of this process",
                "environment",
            )
        ]
    return []


def _gpu_class(gpu: GpuFacts, table: CompatTable) -> Optional[str]:
    model = table.gpu_model(gpu.name) if gpu.name else None
    if model is not None:
        return model.brand_class
    return _BRAND_CLASS.get(gpu.brand or "")


def check_forward_compat(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    """cuda-compat: a newer CUDA on an older driver branch, for data-center GPUs only."""
    forward = table.forward_compat
    if forward is None or not facts.nvml_ok:
        return []
    gpus = gpus_in_scope(facts)
    classes = {gpu.index: _gpu_class(gpu, table) for gpu in gpus}
    unsupported = [g for g in gpus if classes[g.index] is not None and classes[g.index] not in forward.brand_classes]
    source = table.cite(forward.source)
    findings = []
    system = probed_host(facts)
    active = _active_compat_cuda(facts, system)
    if active is not None and unsupported:
        names = ", ".join(gpu_label(g) for g in unsupported)
        findings.append(
            Finding(
                "driver-forward-compat-unsupported-gpu",
                FAIL,
                f"A cuda-compat libcuda (CUDA {active}) is in use, but {names} cannot use forward compatibility",
                f"libcuda.so.1 reports CUDA {active}, newer than the driver's CUDA {facts.driver.cuda_driver_version}: "
                f"it comes from a forward-compatibility package. {forward.note}",
                "Remove the cuda-compat libraries from the library path (LD_LIBRARY_PATH, /etc/ld.so.conf.d) and "
                "upgrade the driver instead; or hide these GPUs with CUDA_VISIBLE_DEVICES.",
                source,
                "driver",
            )
        )
    elif active is not None:
        findings.append(
            Finding(
                "driver-forward-compat-active",
                INFO,
                f"CUDA forward compatibility is in use: libcuda.so.1 supports CUDA {active}",
                f"The driver's own CUDA is {facts.driver.cuda_driver_version}; a cuda-compat libcuda lifts it to "
                f"{active} on these GPUs. {forward.note}",
                "",
                source,
                "driver",
            )
        )
    if target is None or not gpus or active is not None:
        return findings
    try:
        cuda = CudaVersion.parse(target.cuda)
    except VersionError:
        return findings
    if driver_support(facts, table, cuda).tier != "too-old":
        return findings
    package = forward.package_for(cuda.major_minor)
    driver = driver_version(facts)
    branch_ok = forward.supported_on(driver.branch, cuda) if driver is not None else None
    toolkit = table.toolkit_architectures_for(cuda)
    too_old_gpus = [
        g for g in gpus if toolkit is not None and (cc := gpu_cc(g, table)) is not None and not toolkit.supports(cc)
    ]
    if unsupported:
        names = ", ".join(gpu_label(g) for g in unsupported)
        why, reason = f"{names} is not a data-center GPU", f"{forward.note} Only a driver upgrade makes CUDA {cuda.major_minor} run on it."
    elif too_old_gpus:
        names = ", ".join(gpu_label(g) for g in too_old_gpus)
        why = f"CUDA {cuda.major_minor} cannot target {names}"
        reason = (
            f"CUDA {cuda.major_minor} builds for {toolkit.min_cc.sm} to {toolkit.max_cc.sm}; no driver or compat "
            "package changes that."
        )
    elif driver is not None and branch_ok is None:
        why = f"driver branch R{driver.branch} is not in NVIDIA's forward-compatibility matrix"
        reason = f"{forward.note} Only a driver upgrade makes CUDA {cuda.major_minor} run here."
    elif driver is not None and branch_ok is False:
        why = f"NVIDIA does not support {package} on driver branch R{driver.branch}"
        reason = f"NVIDIA's matrix lists the cuda-compat packages each branch takes; {package} is not one for R{driver.branch}."
    elif driver is not None and all(classes[g.index] is not None for g in gpus):
        findings.append(
            Finding(
                "driver-forward-compat-available",
                INFO,
                f"These data-center GPUs can run CUDA {cuda.major_minor} on driver branch R{driver.branch} through {package}",
                f"Forward compatibility installs a newer libcuda beside the older kernel driver; NVIDIA's matrix "
                f"supports {package} on R{driver.branch}. {forward.note}",
                f"Install `{package}` from NVIDIA's CUDA repository and put /usr/local/cuda-{cuda.major_minor}/compat "
                "on LD_LIBRARY_PATH (NVIDIA's CUDA images do this), or upgrade the driver.",
                source,
                "driver",
            )
        )
        return findings
    else:
        return findings  # a GPU of unknown class: no claim either way
    findings.append(
        Finding(
            "driver-forward-compat-unavailable",
            INFO,
            f"cuda-compat cannot help here: {why}",
            reason,
            "Upgrade the driver (see driver-too-old), or pick a variant for an older CUDA.",
            source,
            "driver",
        )
    )
    return findings


def _active_compat_cuda(facts: HostFacts, system: Optional[SystemFacts]) -> Optional[CudaVersion]:
    """libcuda's CUDA when it is newer than the driver's own: a cuda-compat libcuda is loaded."""
    if system is None or not system.libcuda.driver_version or not facts.driver.cuda_driver_version:
        return None
    try:
        loaded = CudaVersion.parse(system.libcuda.driver_version)
        native = CudaVersion.parse(facts.driver.cuda_driver_version)
    except VersionError:
        return None
    return loaded.major_minor if loaded.major_minor > native.major_minor else None


def user_space_versions(system: SystemFacts) -> list[str]:
    return sorted({v for v in (driver_library_version(p) for p in system.driver_libraries) if v})
