"""Environment: what CUDA will see and load from here: CUDA_VISIBLE_DEVICES, libcuda.so.1 and CUDA
stubs on the library path, containers and WSL."""

from __future__ import annotations

from ..host.diagnosis import gpu_request_missing
from ..host.view import gpu_label
from ..host.visibility import (
    AMBIGUOUS_ID,
    DUPLICATE,
    EMPTY,
    MIXED_IDS,
    NEGATIVE,
    OUT_OF_RANGE,
    SOURCE as VISIBILITY_SOURCE,
    UNKNOWN_ID,
)
from ..model.facts import GpuFacts, driver_library_version
from ..model.findings import FAIL, INFO, WARN, Finding
from .context import CheckContext
from .sources import OS_PROBE_SOURCE

CONTAINER_SOURCE = "NVIDIA Container Toolkit, NVIDIA_VISIBLE_DEVICES; /.dockerenv, /run/.containerenv, /proc/1/cgroup"

WSL_SOURCE = "NVIDIA CUDA on WSL User Guide; /usr/lib/wsl/lib and /dev/dxg on this host"

_REASONS = {
    EMPTY: "it is set but empty, which hides every GPU",
    NEGATIVE: "an entry that is negative or not a number ends the list (-1 hides every GPU)",
    OUT_OF_RANGE: "an index past the last GPU ends the list",
    DUPLICATE: "an entry appears twice, which makes CUDA ignore the whole list",
    UNKNOWN_ID: "no GPU has this identifier, which ends the list",
    AMBIGUOUS_ID: "this UUID prefix fits several GPUs, which ends the list",
    MIXED_IDS: "a list of GPU- UUIDs ends at the first entry of another kind",
}

# The fixes of the findings that diagnose why NVML is missing; nvml-library-missing carries the same
# words when it knows the cause (rules/nvml.py), so each finding says its own fix.
CONTAINER_NO_GPUS_HINT = (
    "Start the container cudadoctor runs in again with GPUs: `docker run --gpus all IMAGE` (the NVIDIA Container "
    "Toolkit installed on the host), or `--device nvidia.com/gpu=all` through CDI; on Kubernetes, request "
    "`nvidia.com/gpu` resources in its pod."
)
WSL_NO_GPU_HINT = (
    "Install a current NVIDIA Windows driver (with WSL support), run `wsl --update`, use a WSL 2 (not WSL 1) "
    "distribution, and restart WSL with `wsl --shutdown`."
)


def _visible_label(position: int, gpu: GpuFacts) -> str:
    return f"cuda:{position} = {gpu_label(gpu)}"


def check_visible_devices(ctx: CheckContext) -> list[Finding]:
    host, facts = ctx.host, ctx.facts
    system = host.system
    if system is None or not facts.nvml_ok or not facts.gpus:
        return []
    view = host.visibility
    findings = []
    if not view.restricted:
        return []
    setting = f"CUDA_VISIBLE_DEVICES={view.setting!r}"
    why = _REASONS.get(view.reason or "", "")
    if not view.gpus:
        findings.append(
            Finding(
                code="env-visible-devices-none",
                severity=FAIL,
                title=f"{setting} hides every GPU from CUDA",
                detail=f"{why[0].upper() + why[1:] if why else 'No entry names a GPU here'}. CUDA programs see no device: "
                    "\"no CUDA-capable device is detected\", torch.cuda.is_available() is False. "
                    f"This host has {len(facts.gpus)} GPU(s).",
                hint="Unset CUDA_VISIBLE_DEVICES, or list GPUs that exist: indexes 0.." + str(len(facts.gpus) - 1)
                    + " or their UUIDs (`nvidia-smi -L`).",
                source=VISIBILITY_SOURCE,
            )
        )
        return findings
    if view.ignored:
        findings.append(
            Finding(
                code="env-visible-devices-ignored",
                severity=WARN,
                title=f"CUDA ignores {', '.join(repr(e) for e in view.ignored)} in {setting}",
                detail=f"{why[0].upper() + why[1:]}: CUDA uses only the entries before it." if why else "",
                hint="Fix or remove the ignored entries (`nvidia-smi -L` lists indexes and UUIDs).",
                source=VISIBILITY_SOURCE,
            )
        )
    seen = "; ".join(_visible_label(i, g) for i, g in enumerate(view.gpus))
    if view.mig_devices:
        seen = "; ".join(
            f"cuda:{i} = MIG {mig.name or mig.uuid} on GPU {parent}" for i, (parent, mig) in enumerate(view.mig_devices)
        )
    findings.append(
        Finding(
            code="env-visible-devices",
            severity=INFO,
            title=f"CUDA sees {len(view.mig_devices) or len(view.gpus)} of this host's devices ({setting})",
            detail=f"{seen}. The GPU checks judge these only.",
            source=VISIBILITY_SOURCE,
        )
    )
    if view.order_ambiguous:
        findings.append(
            Finding(
                code="env-device-order-ambiguous",
                severity=WARN,
                title="CUDA_VISIBLE_DEVICES counts in CUDA's fastest-first order on a host of mixed GPUs",
                detail="Without CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA numbers the fastest GPU 0, which need not be "
                    "nvidia-smi's GPU 0: the indexes may select other GPUs than intended. cudadoctor assumed "
                    "nvidia-smi's order.",
                hint="Set CUDA_DEVICE_ORDER=PCI_BUS_ID, or select GPUs by UUID (`nvidia-smi -L`).",
                source=VISIBILITY_SOURCE,
            )
        )
    return findings

CUDA_ERROR_STUB_LIBRARY = 34


def check_libcuda(ctx: CheckContext) -> list[Finding]:
    host = ctx.host
    system = host.system
    if system is None:
        return []
    libcuda = system.libcuda
    stub_loaded = libcuda.error_code == CUDA_ERROR_STUB_LIBRARY or "/stubs/" in (libcuda.path or "")
    if stub_loaded:
        return [
            Finding(
                code="driver-stub-libcuda",
                severity=FAIL,
                title="libcuda.so.1 resolves to the CUDA toolkit's link-time stub, not the driver",
                detail=f"The loader picks {libcuda.path or 'a stub libcuda.so.1'}, which exists only for linking: every "
                    "call fails with \"CUDA driver is a stub library\" (34) or \"CUDA driver version is insufficient for "
                    "CUDA runtime version\", even on a good driver.",
                hint="Remove the toolkit's stubs directory from LD_LIBRARY_PATH (and any libcuda.so.1 link made inside "
                    "it); keep it on LIBRARY_PATH for linking only.",
                source=OS_PROBE_SOURCE,
            )
        ]
    if system.ld_library_path_stubs:
        return [
            Finding(
                code="env-cuda-stubs-on-path",
                severity=WARN,
                title="A CUDA stubs directory is on LD_LIBRARY_PATH",
                detail=f"LD_LIBRARY_PATH contains {', '.join(system.ld_library_path_stubs)}. Those libraries are link-time "
                    "stand-ins; if one of them is found before the driver's libcuda.so.1, CUDA reports \"CUDA driver "
                    "version is insufficient for CUDA runtime version\" on a good driver.",
                hint="Remove it from LD_LIBRARY_PATH; link against it with LIBRARY_PATH or -L instead.",
                source="LD_LIBRARY_PATH of this process",
            )
        ]
    return []


def check_container(ctx: CheckContext) -> list[Finding]:
    host, facts = ctx.host, ctx.facts
    system = host.system
    if system is None or not system.in_container:
        return []
    where = system.container_runtime or "a container"
    evidence = ", ".join(system.container_evidence)
    # NVML enumerating GPUs proves they were passed in, whatever this process sees of /dev.
    nvml_sees_gpus = facts.nvml_ok and facts.driver.source == "nvml" and bool(facts.gpus)
    if gpu_request_missing(system) and not nvml_sees_gpus:
        requested = system.env("NVIDIA_VISIBLE_DEVICES")
        if requested is not None and requested.strip().lower() in ("", "void", "none"):
            detail = f"NVIDIA_VISIBLE_DEVICES={requested!r}: the NVIDIA runtime passes no GPU into this container"
            if requested.strip().lower() == "none":
                detail += " (\"none\" mounts the driver but no device)"
        else:
            detail = "There is no /dev/nvidiactl and no /dev/nvidia0 in this container: no GPU was passed in"
        return [
            Finding(
                code="container-no-gpus",
                severity=FAIL,
                title=f"This {where} container was started without GPU access",
                detail=f"{detail}. CUDA reports \"no CUDA-capable device is detected\" and torch.cuda.is_available() is "
                    f"False. (Container detected from {evidence}.)",
                hint=_restart_with_gpus_hint(ctx),
                source=CONTAINER_SOURCE,
            )
        ]
    return [
        Finding(
            code="container-detected",
            severity=INFO,
            title=f"Running inside a {where} container",
            detail=f"Detected from {evidence}. The driver comes from the host; GPUs are those the runtime passed in "
                f"(NVIDIA_VISIBLE_DEVICES={system.env('NVIDIA_VISIBLE_DEVICES')!r}).",
            source=CONTAINER_SOURCE,
        )
    ]


def _restart_with_gpus_hint(ctx: CheckContext) -> str:
    """The fix names its object: the container cudadoctor runs in, not one a --run line starts
    (whose own --gpus, when it has one, does not reach this one)."""
    run = ctx.target.run if ctx.target else None
    if run is not None and (run.gpus or run.cdi_gpus):
        return "The --run line's GPU option is for the container it starts, not for this one. " + CONTAINER_NO_GPUS_HINT
    return CONTAINER_NO_GPUS_HINT


def check_wsl(ctx: CheckContext) -> list[Finding]:
    host = ctx.host
    system = host.system
    if system is None or not system.wsl:
        return []
    findings = []
    if not (system.wsl_gpu_libs and system.wsl_dxg):
        missing = [p for p, ok in (("/usr/lib/wsl/lib", system.wsl_gpu_libs), ("/dev/dxg", system.wsl_dxg)) if not ok]
        findings.append(
            Finding(
                code="wsl-no-gpu-support",
                severity=FAIL,
                title="WSL without GPU support: " + ", ".join(missing) + " missing",
                detail="Under WSL 2 the NVIDIA driver lives on Windows and reaches Linux through /dev/dxg, with its "
                    "libraries (libcuda.so.1, libnvidia-ml.so.1) in /usr/lib/wsl/lib. Without them CUDA sees no GPU.",
                hint=WSL_NO_GPU_HINT,
                source=WSL_SOURCE,
            )
        )
    linux_driver = [p for p in system.driver_libraries if not p.startswith("/usr/lib/wsl/")]
    if linux_driver or system.kernel_module.loaded:
        versions = sorted({v for v in (driver_library_version(p) for p in linux_driver) if v})
        findings.append(
            Finding(
                code="wsl-linux-driver-installed",
                severity=FAIL,
                title="A Linux NVIDIA driver is installed inside WSL",
                detail="Found " + ", ".join(linux_driver or ["a loaded nvidia kernel module"])
                    + (f" (driver {', '.join(versions)})" if versions else "")
                    + ". Under WSL the driver must come from Windows only; Linux driver libraries shadow the ones in "
                    "/usr/lib/wsl/lib and break CUDA (\"Failed to initialize NVML\", \"no CUDA-capable device is detected\").",
                hint="Remove the Linux driver packages (e.g. `sudo apt purge 'nvidia-driver-*' 'libnvidia-*'`), keep "
                    "only a CUDA toolkit without the driver (the WSL-Ubuntu cuda-toolkit package), and run "
                    "`wsl --shutdown`.",
                source=WSL_SOURCE,
            )
        )
    if not findings:
        findings.append(
            Finding(
                code="wsl-detected",
                severity=INFO,
                title="Running under WSL 2 with GPU paravirtualisation",
                detail="The NVIDIA driver is the Windows one (libraries in /usr/lib/wsl/lib, device /dev/dxg); no Linux "
                    "driver or kernel module is involved, so /proc/driver/nvidia and /dev/nvidia* are absent by design "
                    "and some NVML fields are unavailable.",
                hint="Update the driver on Windows, never inside WSL.",
                source=WSL_SOURCE,
            )
        )
    return findings
