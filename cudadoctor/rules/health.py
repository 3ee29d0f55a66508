"""GPU health that blocks work, MIG instances, memory and capabilities of the GPUs CUDA will see."""

from __future__ import annotations

from typing import Optional

from ..facts import HostFacts
from ..findings import FAIL, INFO, WARN, Finding
from ..hostview import gpu_cc, gpu_label, gpus_in_scope
from ..table import CompatTable
from ..target import Target
from ..visibility import visibility_of

NVML_SOURCE = "NVML (nvidia-ml-py) on this host"


def _gib(size: int) -> str:
    return f"{size / 2**30:.1f} GiB"


def check_health(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    if not facts.nvml_ok:
        return []
    findings = []
    for gpu in gpus_in_scope(facts):
        if gpu.source != "nvml":
            continue
        label = gpu_label(gpu)
        if gpu.lost:
            findings.append(
                Finding(
                    "gpu-lost",
                    FAIL,
                    f"{label} has fallen off the bus",
                    "NVML answers \"GPU is lost\" for it: the GPU stopped responding (Xid 79), from power, "
                    "heat, a PCIe fault or a driver crash. Every CUDA call on it fails.",
                    "Reboot (or reset with `nvidia-smi -r` when nothing uses it); if it repeats, check power, "
                    "cooling and seating, then `nvidia-bug-report.sh`. Meanwhile hide it with CUDA_VISIBLE_DEVICES.",
                    NVML_SOURCE,
                    "gpu",
                    gpu.index,
                )
            )
            continue
        if gpu.remapped_rows_failure:
            findings.append(
                Finding(
                    "gpu-row-remap-failure",
                    FAIL,
                    f"{label}: a memory row could not be remapped",
                    "NVML reports a row-remapping failure: the GPU has run out of spare memory rows for its "
                    "uncorrectable errors, and its memory can no longer be trusted.",
                    "Take the GPU out of service and contact the vendor (RMA); hide it with CUDA_VISIBLE_DEVICES meanwhile.",
                    NVML_SOURCE,
                    "gpu",
                    gpu.index,
                )
            )
        if gpu.ecc_uncorrectable_volatile:
            findings.append(
                Finding(
                    "gpu-ecc-uncorrectable",
                    FAIL,
                    f"{label}: {gpu.ecc_uncorrectable_volatile} uncorrectable ECC error(s) since the driver loaded",
                    "Uncorrectable memory errors kill the CUDA contexts that hit them (\"uncorrectable ECC error "
                    "encountered\") and leave the GPU needing a reset.",
                    "Reset the GPU (`nvidia-smi -r`) or reboot; if the count grows again, retire the GPU.",
                    NVML_SOURCE,
                    "gpu",
                    gpu.index,
                )
            )
        if gpu.remapped_rows_pending:
            findings.append(
                Finding(
                    "gpu-row-remap-pending",
                    WARN,
                    f"{label}: a memory row remapping waits for a GPU reset",
                    "NVML reports a pending row remap: a faulty memory row will only be replaced after the GPU is "
                    "reset; until then the error can recur.",
                    "Reset the GPU (`nvidia-smi -r`) or reboot when it is idle.",
                    NVML_SOURCE,
                    "gpu",
                    gpu.index,
                )
            )
        if gpu.retired_pages_pending:
            findings.append(
                Finding(
                    "gpu-retired-pages-pending",
                    WARN,
                    f"{label}: memory pages wait to be retired at the next reset",
                    "NVML reports pages pending retirement after ECC errors; they stay in use until the GPU is reset.",
                    "Reset the GPU (`nvidia-smi -r`) or reboot when it is idle.",
                    NVML_SOURCE,
                    "gpu",
                    gpu.index,
                )
            )
        if gpu.persistence_mode is False:
            findings.append(
                Finding(
                    "gpu-persistence-off",
                    INFO,
                    f"{label}: persistence mode is off",
                    "The driver tears the GPU state down when no program uses it, so the first CUDA call of each "
                    "program pays the initialisation (up to seconds). Nothing fails because of it.",
                    "For servers: `sudo nvidia-smi -pm 1` or the nvidia-persistenced service.",
                    NVML_SOURCE,
                    "gpu",
                    gpu.index,
                )
            )
    return findings


def check_mig(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    if not facts.nvml_ok:
        return []
    findings = []
    for gpu in gpus_in_scope(facts):
        if not gpu.mig_enabled:
            continue
        label = gpu_label(gpu)
        if not gpu.mig_devices:
            findings.append(
                Finding(
                    "mig-no-instances",
                    FAIL,
                    f"{label} is in MIG mode but has no MIG instances",
                    "A GPU in MIG mode runs CUDA only inside GPU/compute instances; with none created CUDA sees "
                    "no device on it (\"no CUDA-capable device is detected\").",
                    "Create instances (`sudo nvidia-smi mig -cgi 9,9 -C`, profiles from `nvidia-smi mig -lgip`) "
                    "or turn MIG off (`sudo nvidia-smi -i N -mig 0` and reset the GPU).",
                    NVML_SOURCE,
                    "gpu",
                    gpu.index,
                )
            )
            continue
        parts = [
            f"{mig.name or 'MIG ' + str(mig.index)} ({_gib(mig.memory_total_bytes) if mig.memory_total_bytes else 'memory unknown'}, {mig.uuid or 'no UUID'})"
            for mig in gpu.mig_devices
        ]
        findings.append(
            Finding(
                "mig-instances",
                INFO,
                f"{label} is split into {len(gpu.mig_devices)} MIG instance(s)",
                "; ".join(parts) + ". A CUDA process uses one MIG instance: select it with "
                "CUDA_VISIBLE_DEVICES=MIG-<uuid>.",
                "",
                NVML_SOURCE,
                "gpu",
                gpu.index,
            )
        )
    return findings


def check_memory(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    if target is None or target.min_memory_bytes is None:
        return []
    want = target.min_memory_bytes
    view = visibility_of(facts)
    findings = []
    if view.mig_devices:
        for parent, mig in view.mig_devices:
            if mig.memory_total_bytes is not None and mig.memory_total_bytes < want:
                findings.append(
                    Finding(
                        "gpu-memory-low",
                        WARN,
                        f"MIG instance {mig.name or mig.uuid} on GPU {parent} has {_gib(mig.memory_total_bytes)}, less than {_gib(want)}",
                        "A workload sized for --min-memory will run out of memory (\"CUDA out of memory\").",
                        "Use a larger MIG profile or a whole GPU.",
                        NVML_SOURCE,
                        "gpu",
                        parent,
                    )
                )
        return findings
    unknown = [gpu for gpu in gpus_in_scope(facts) if gpu.memory_total_bytes is None]
    if unknown:
        findings.append(
            Finding(
                "gpu-memory-unknown",
                INFO,
                f"--min-memory not checked for {', '.join(gpu_label(g) for g in unknown)}: memory unknown",
                "NVML gave no memory size (or the GPU was given with --gpu, and a product name does not fix its "
                "memory: an A100 has 40 or 80 GB).",
                "Check on the real host, or on a snapshot taken there (`cudadoctor probe --output`).",
                NVML_SOURCE,
                "gpu",
            )
        )
    for gpu in gpus_in_scope(facts):
        size = gpu.memory_total_bytes
        if size is not None and size < want:
            findings.append(
                Finding(
                    "gpu-memory-low",
                    WARN,
                    f"{gpu_label(gpu)} has {_gib(size)}, less than the {_gib(want)} asked for",
                    "A workload sized for --min-memory will fail with \"CUDA out of memory\" on this GPU.",
                    "Use a GPU with more memory, shrink the batch or model, or hide this GPU with CUDA_VISIBLE_DEVICES.",
                    NVML_SOURCE if gpu.source == "nvml" else "--gpu",
                    "gpu",
                    gpu.index,
                )
            )
    return findings


def check_capabilities(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    if not table.features:
        return []
    findings = []
    for gpu in gpus_in_scope(facts):
        cc = gpu_cc(gpu, table)
        if cc is None:
            continue
        has = [f"{f.name} (>= {f.min_cc})" for f in table.features if cc >= f.min_cc]
        lacks = [f"{f.name} (needs >= {f.min_cc})" for f in table.features if cc < f.min_cc]
        detail = ("Has: " + ", ".join(has) + ". " if has else "") + ("Lacks: " + ", ".join(lacks) + "." if lacks else "")
        sources = "; ".join(dict.fromkeys(table.cite(f.source) for f in table.features))
        findings.append(
            Finding(
                "gpu-capabilities",
                INFO,
                f"{gpu_label(gpu)}, compute capability {cc}: {len(has)} of {len(table.features)} listed features",
                detail.strip(),
                "",
                sources,
                "gpu",
                gpu.index,
            )
        )
    return findings
