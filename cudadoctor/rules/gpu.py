"""Which GPUs are there, and does the target carry code they can run?"""

from __future__ import annotations

from typing import Optional

from ..facts import HostFacts
from ..findings import FAIL, INFO, OK, WARN, Finding
from ..hostview import gpu_cc, gpu_label, gpu_runs_variant, gpus_in_scope
from ..table import CompatTable
from ..target import Target
from ..versions import ComputeCapability
from ..visibility import visible_devices_excluding

NVML_SOURCE = "NVML (nvidia-ml-py) on this host"


def _gib(size: Optional[int]) -> str:
    return f"{size / 2**30:.0f} GiB" if size else "memory unknown"


def check_gpus_present(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    if not facts.nvml_ok:
        return []
    gpus = gpus_in_scope(facts)
    if not gpus and facts.gpus:
        return []  # CUDA_VISIBLE_DEVICES hides them all: env-visible-devices-none says so
    if not gpus:
        if facts.driver.source == "what-if" and not facts.gpus:
            return [
                Finding(
                    "gpu-not-specified",
                    INFO,
                    "No GPU given: GPU checks skipped",
                    "The driver was given with --driver and no GPU is known on this host.",
                    "Add --gpu MODEL (or a compute capability such as 8.0) to check GPU support too.",
                    "",
                    "gpu",
                )
            ]
        return [
            Finding(
                "no-gpu",
                FAIL,
                "The driver answers but no GPU is visible",
                "NVML reports 0 GPUs: CUDA reports \"no CUDA-capable device is detected\" and "
                "torch.cuda.is_available() is False.",
                "Check `nvidia-smi` and `lspci | grep -i nvidia`. In a container, start it with `--gpus all`; "
                "a GPU missing from lspci needs a reseat, a power cable or a BIOS setting (above-4G decoding).",
                NVML_SOURCE,
                "gpu",
            )
        ]
    findings = []
    for gpu in gpus:
        cc = gpu_cc(gpu, table)
        info = table.cc_info(cc) if cc else None
        facts_line = ", ".join(
            part
            for part in (
                cc.sm if cc else "compute capability unknown",
                info.architecture if info else None,
                _gib(gpu.memory_total_bytes),
                gpu.brand,
            )
            if part
        )
        source = NVML_SOURCE if gpu.source == "nvml" else "--gpu"
        if cc is None:
            findings.append(
                Finding(
                    "gpu-cc-unknown",
                    WARN,
                    f"{gpu_label(gpu)}: compute capability unknown",
                    "NVML did not report the compute capability and the catalogue does not know this name, "
                    "so the architecture checks cannot judge this GPU.",
                    "Pass the compute capability with --gpu (e.g. --gpu 8.6) to check it.",
                    source,
                    "gpu",
                    gpu.index,
                )
            )
            continue
        findings.append(Finding("gpu-ok", OK, f"{gpu_label(gpu)}: {facts_line}", "", "", source, "gpu", gpu.index))
        model = table.gpu_model(gpu.name) if gpu.name else None
        if model is not None and model.brand_class == "embedded":
            findings.append(
                Finding(
                    "gpu-embedded",
                    WARN,
                    f"{gpu_label(gpu)} is an embedded (Jetson) module: the wheel and image verdicts do not apply",
                    "The table's arch lists describe PyTorch's Linux x86_64 wheels and the images built on them. "
                    "Jetson modules are aarch64 systems that run NVIDIA's JetPack builds of PyTorch, with their "
                    "own CUDA and arch lists.",
                    "Use the PyTorch build NVIDIA publishes for your JetPack release.",
                    table.cite(model.source),
                    "gpu",
                    gpu.index,
                )
            )
    return findings


def check_arch_for_target(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    if target is None:
        return []
    release = table.release(target.torch)
    variant = release.variant(target.variant) if release else None
    if variant is None:
        return []
    source = table.cite(variant.source)
    what = f"PyTorch {release.version} {variant.name}"
    judged = [(gpu, cc, gpu_runs_variant(facts, table, variant, cc)) for gpu in gpus_in_scope(facts) if (cc := gpu_cc(gpu, table))]
    blocked = [gpu for gpu, _, verdict in judged if verdict not in ("sass", "ptx")]
    findings = []
    for gpu, cc, verdict in judged:
        if verdict == "sass":
            findings.append(
                Finding("gpu-arch-ok", OK, f"{what} carries {cc.sm} code for {gpu_label(gpu)}", "", "", source, "gpu", gpu.index)
            )
        elif verdict == "ptx":
            findings.append(
                Finding(
                    "gpu-arch-ptx-only",
                    WARN,
                    f"{what} runs on {gpu_label(gpu)} only by JIT-compiling PTX",
                    f"The build ships machine code for {variant.arch_summary()}; {cc.sm} gets PTX compiled by "
                    "the driver at first use: slow start-up (minutes) and no JIT under minor-version "
                    "compatibility.",
                    "Prefer a variant whose arch list includes this GPU (`cudadoctor recommend`).",
                    source,
                    "gpu",
                    gpu.index,
                )
            )
        else:
            findings.append(_not_built(facts, table, target, gpu, cc, variant, what, source, blocked, verdict))
    return findings


def _not_built(facts, table, target, gpu, cc: ComputeCapability, variant, what, source, blocked, verdict) -> Finding:
    release = table.release(target.torch)
    fitting = [v.name for v in release.variants if v.coverage(cc) == "sass"] if release else []
    hints = []
    if fitting:
        hints.append(f"Use a variant of PyTorch {release.version} built for {cc.sm}: {', '.join(fitting)}.")
    else:
        others = [
            r.version
            for r in sorted(table.pytorch_releases, key=lambda r: r.key, reverse=True)
            if any(v.coverage(cc) == "sass" for v in r.variants)
        ]
        if others:
            hints.append(f"No variant of PyTorch {release.version} supports {cc.sm}; PyTorch {others[0]} is the newest that does.")
        else:
            hints.append(f"No PyTorch release in the table ships code for {cc.sm}; build PyTorch from source with TORCH_CUDA_ARCH_LIST={cc}.")
    keep = visible_devices_excluding(facts, blocked)
    if keep:
        hints.append(f"Or use only the GPUs this build runs on: {keep}.")
    why = (
        f"It ships only PTX for {cc.sm}, and a driver running CUDA {variant.cuda.major_minor} under minor-version "
        "compatibility cannot JIT-compile PTX newer than itself. "
        if verdict == "ptx-minor-compat"
        else ""
    )
    return Finding(
        "gpu-arch-not-built",
        FAIL,
        f"{what} carries no code for {gpu_label(gpu)}, {cc.sm}",
        f"{why}Its Linux wheels are built for {variant.arch_summary()}. Machine code for sm_X.Y runs only on "
        f"GPUs sm_X.Z with Z >= Y, and PTX only on newer GPUs. torch warns \"{cc.sm} is not compatible with "
        "the current PyTorch installation\" and kernels fail with \"no kernel image is available for execution "
        "on the device\".",
        " ".join(hints),
        source,
        "gpu",
        gpu.index,
    )
