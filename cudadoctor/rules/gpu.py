"""GPUs: which GPUs CUDA will use, does the target carry code they can run, and their health, MIG
instances, memory and capabilities."""

from __future__ import annotations

from ..compat.table import ARM_PLATFORM, PytorchRelease, WheelVariant, platform_label
from ..host.view import gpu_label
from ..model.facts import GpuFacts
from ..model.findings import FAIL, INFO, OK, WARN, Action, Finding
from ..model.versions import ComputeCapability
from .context import CheckContext
from .sources import NVML_SOURCE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def _gib(size: Optional[int]) -> str:
    return f"{size / 2**30:.0f} GiB" if size else "memory unknown"


def _gib_exact(size: int) -> str:
    return f"{size / 2**30:.1f} GiB"


def check_gpus_present(ctx: CheckContext) -> list[Finding]:
    host, facts, table = ctx.host, ctx.facts, ctx.table
    if not facts.nvml_ok:
        return []
    gpus = host.gpus_in_scope
    if not gpus and facts.gpus:
        return []  # CUDA_VISIBLE_DEVICES hides them all: env-visible-devices-none says so
    if not gpus:
        if facts.driver.source == "what-if" and not facts.gpus:
            return [
                Finding(
                    code="gpu-not-specified",
                    severity=INFO,
                    title="No GPU given: GPU checks skipped",
                    detail="The driver was given with --driver and no GPU is known on this host.",
                    hint="Add --gpu MODEL (or a compute capability such as 8.0) to check GPU support too.",
                )
            ]
        return [
            Finding(
                code="no-gpu",
                severity=FAIL,
                title="The driver answers but no GPU is visible",
                detail="NVML reports 0 GPUs: CUDA reports \"no CUDA-capable device is detected\" and "
                    "torch.cuda.is_available() is False.",
                hint="Check `nvidia-smi` and `lspci | grep -i nvidia`. In a container, start the container with `docker run --gpus all IMAGE`; "
                    "a GPU missing from lspci needs a reseat, a power cable or a BIOS setting (above-4G decoding).",
                source=NVML_SOURCE,
            )
        ]
    findings = []
    lines: dict[tuple[Optional[ComputeCapability], Optional[int], Optional[str]], str] = {}  # eight identical GPUs: one line
    for gpu in gpus:
        cc = host.cc(gpu)
        facts_line = lines.get((cc, gpu.memory_total_bytes, gpu.brand))
        if facts_line is None:
            facts_line = lines[(cc, gpu.memory_total_bytes, gpu.brand)] = _facts_line(ctx, cc, gpu)
        source = NVML_SOURCE if gpu.source == "nvml" else "--gpu"
        if cc is None:
            findings.append(
                Finding(
                    code="gpu-cc-unknown",
                    severity=WARN,
                    title=f"{gpu_label(gpu)}: compute capability unknown",
                    detail="NVML did not report the compute capability and the catalogue does not know this name, "
                        "so the architecture checks cannot judge this GPU.",
                    hint="Pass the compute capability with --gpu (e.g. --gpu 8.6) to check it.",
                    source=source,
                    gpu_index=gpu.index,
                )
            )
            continue
        findings.append(Finding(
            code="gpu-ok",
            severity=OK,
            title=f"{gpu_label(gpu)}: {facts_line}",
            source=source,
            gpu_index=gpu.index,
        ))
        model = host.model(gpu)
        if model is not None and model.brand_class == "embedded":
            findings.append(
                Finding(
                    code="gpu-embedded",
                    severity=WARN,
                    title=f"{gpu_label(gpu)} is an embedded (Jetson) module: the wheel and image verdicts do not apply",
                    detail="The table's arch lists describe PyTorch's Linux x86_64 wheels and the images built on them. "
                        "Jetson modules are aarch64 systems that run NVIDIA's JetPack builds of PyTorch, with their "
                        "own CUDA and arch lists.",
                    hint="Use the PyTorch build NVIDIA publishes for your JetPack release.",
                    source=table.cite(model.source),
                    gpu_index=gpu.index,
                )
            )
    return findings


def _facts_line(ctx: CheckContext, cc: Optional[ComputeCapability], gpu: GpuFacts) -> str:
    """"sm_80, Ampere, 80 GiB, tesla": what the gpu-ok line says of a GPU."""
    info = ctx.table.cc_info(cc) if cc else None
    parts = (cc.sm if cc else "compute capability unknown", info.architecture if info else None, _gib(gpu.memory_total_bytes), gpu.brand)
    return ", ".join(part for part in parts if part)


def check_arch_for_target(ctx: CheckContext) -> list[Finding]:
    host, table, target = ctx.host, ctx.table, ctx.target
    if target is None:
        return []
    if target.arch_list and ctx.target_cuda is not None:
        return _own_arch_list(ctx)
    if target.family and ctx.table.ngc_family(target.family) is not None:
        return []  # an NGC build is not the wheel of its PyTorch release: without its arch list, no verdict
    release = table.release(target.torch)
    variant = release.variant(target.variant) if release else None
    if release is None or variant is None:
        return []
    built = variant.on_record_for(host.platform)  # the Arm wheels carry other code than the x86_64 ones
    if built is None:
        return [_arch_unrecorded(ctx, release, variant)]
    variant = built
    source = table.cite(variant.source)
    what = f"PyTorch {release.version} {variant.name}"
    verdicts = {cc: host.runs(variant, cc) for cc in host.ccs_in_scope}  # eight identical GPUs: asked once
    judged = [(gpu, cc, verdicts[cc]) for gpu in host.gpus_in_scope if (cc := host.cc(gpu))]
    blocked = [gpu for gpu, _, verdict in judged if verdict not in ("sass", "ptx")]
    findings = []
    for gpu, cc, verdict in judged:
        if verdict == "sass":
            findings.append(
                Finding(
                    code="gpu-arch-ok",
                    severity=OK,
                    title=f"{what} carries {cc.sm} code for {gpu_label(gpu)}",
                    source=source,
                    gpu_index=gpu.index,
                )
            )
        elif verdict == "ptx":
            findings.append(
                Finding(
                    code="gpu-arch-ptx-only",
                    severity=WARN,
                    title=f"{what} runs on {gpu_label(gpu)} only by JIT-compiling PTX",
                    detail=f"The build ships machine code for {variant.arch_summary()}; {cc.sm} gets PTX compiled by "
                        "the driver at first use: slow start-up (minutes) and no JIT under minor-version "
                        "compatibility.",
                    hint="Prefer a variant whose arch list includes this GPU (`cudadoctor recommend`).",
                    source=source,
                    gpu_index=gpu.index,
                )
            )
        else:
            findings.append(_not_built(ctx, release, gpu, cc, variant, what, source, blocked, verdict))
    return findings


IMAGE_BINARY_SOURCE = "the image's torch/lib/libtorch_cuda*.so (its .nv_fatbin sections, read through the Docker archive API)"


def _own_arch_list(ctx: CheckContext) -> list[Finding]:
    """An image whose build names its own arch list (an NGC image's TORCH_CUDA_ARCH_LIST)."""
    from ..host.ngc import arch_variant

    host, target, cuda = ctx.host, ctx.target, ctx.target_cuda
    assert target is not None and target.arch_list and cuda is not None
    image = target.image_facts
    from_binary = image is not None and image.torch_arch_list == target.arch_list
    if from_binary:
        read = "its torch's binaries"
    else:
        read = "its environment" if image is not None and image.env_value("TORCH_CUDA_ARCH_LIST") else "the table"
    family = ctx.table.ngc_family(target.family or "")
    variant = arch_variant(cuda, target.arch_list, family.source if family else "")
    what = f"{target.image or 'the image'} (arch list {' '.join(target.arch_list)}, from {read})"
    source = IMAGE_BINARY_SOURCE if from_binary else ctx.table.cite(family.source) if family else "TORCH_CUDA_ARCH_LIST"
    fix = ("Use a newer NGC release whose arch list names this GPU (`cudadoctor recommend --image --family ngc-pytorch`)."
           if family else "Use an image whose torch carries code for this GPU (`cudadoctor recommend --image`).")
    findings = []
    for gpu in host.gpus_in_scope:
        cc = host.cc(gpu)
        if cc is None:
            continue
        verdict = host.runs(variant, cc)
        if verdict == "sass":
            findings.append(Finding(code="gpu-arch-ok", severity=OK, title=f"{what} carries {cc.sm} code for {gpu_label(gpu)}",
                                    source=source, gpu_index=gpu.index))
        elif verdict == "ptx":
            findings.append(Finding(
                code="gpu-arch-ptx-only", severity=WARN,
                title=f"{what} runs on {gpu_label(gpu)} only by JIT-compiling PTX",
                detail=f"The build ships machine code for {variant.arch_summary()}; {cc.sm} gets PTX compiled by the "
                    "driver at first use: slow start-up, and no JIT under minor-version compatibility.",
                hint=fix, source=source, gpu_index=gpu.index))
        else:
            findings.append(Finding(
                code="gpu-arch-not-built", severity=FAIL,
                title=f"{what} carries no code for {gpu_label(gpu)}, {cc.sm}",
                detail=f"The build ships code for {variant.arch_summary()}. Kernels fail with \"no kernel image is "
                    "available for execution on the device\".",
                hint=fix, source=source, gpu_index=gpu.index))
    return findings


def _arch_unrecorded(ctx: CheckContext, release: PytorchRelease, variant: WheelVariant) -> Finding:
    """The target has no build on record for this host's platform (Linux aarch64 wheels whose arch
    list nothing settles): no verdict on the GPUs, and not a pass either."""
    where = platform_label(ctx.host.platform or "")
    return Finding(
        code="gpu-arch-unrecorded",
        severity=WARN,
        title=f"What PyTorch {release.version} {variant.name}'s {where} wheels carry is not on record",
        detail=f"The table's arch list for {variant.name} is its x86_64 wheels'; the {where} wheels carry other code "
        "where both are on record (from 2.12 on: sm_80, sm_90, sm_100, sm_110, sm_120), so no GPU verdict is given.",
        hint="Pick a variant the table records for this platform (`cudadoctor recommend`), or check the installed "
        "wheel itself with `cudadoctor check --torch-runtime`.",
        source=ctx.table.cite(variant.source),
    )


def _not_built(
    ctx: CheckContext, release: PytorchRelease, gpu: GpuFacts, cc: ComputeCapability, variant: WheelVariant,
    what: str, source: str, blocked: list[GpuFacts], verdict: str,
) -> Finding:
    host, table = ctx.host, ctx.table
    platform = host.platform
    fitting = [  # judged as the GPU is (the toolkit must be able to target it too), not by the arch list alone
        v.name for v in release.variants
        if v.verified and (built := v.on_record_for(platform)) is not None and host.runs(built, cc) == "sass"
    ]
    hints = []
    actions: list[Action] = []
    if fitting:
        hints.append(f"Use a variant of PyTorch {release.version} built for {cc.sm}: {', '.join(fitting)}.")
        actions += [Action("use-variant", torch=release.version, variant=name) for name in fitting]
    else:
        newest = table.newest_release_with_sass_for(cc, platform)
        if newest is not None:
            hints.append(f"No variant of PyTorch {release.version} supports {cc.sm}; PyTorch {newest.version} is the newest that does.")
            actions.append(Action("use-release", torch=newest.version))
        else:
            where = f" {platform_label(platform)}" if platform == ARM_PLATFORM else ""
            hints.append(f"No PyTorch release in the table ships{where} code for {cc.sm}; build PyTorch from source with TORCH_CUDA_ARCH_LIST={cc}.")
    keep = host.visible_devices_excluding(blocked)
    if keep:
        hints.append(f"Or use only the GPUs this build runs on: {keep}.")
    why = (
        f"It ships only PTX for {cc.sm}, and a driver running CUDA {variant.cuda.major_minor} under minor-version "
        "compatibility cannot JIT-compile PTX newer than itself. "
        if verdict == "ptx-minor-compat"
        else ""
    )
    return Finding(
        code="gpu-arch-not-built",
        severity=FAIL,
        title=f"{what} carries no code for {gpu_label(gpu)}, {cc.sm}",
        detail=f"{why}Its Linux wheels are built for {variant.arch_summary()}. Machine code for sm_X.Y runs only on "
            f"GPUs sm_X.Z with Z >= Y, and PTX only on newer GPUs. torch warns \"{cc.sm} is not compatible with "
            "the current PyTorch installation\" and kernels fail with \"no kernel image is available for execution "
            "on the device\".",
        hint=" ".join(hints),
        source=source,
        gpu_index=gpu.index,
        actions=tuple(actions),
    )


def check_health(ctx: CheckContext) -> list[Finding]:
    host, facts = ctx.host, ctx.facts
    if not facts.nvml_ok:
        return []
    findings = []
    for gpu in host.gpus_in_scope:
        if gpu.source != "nvml":
            continue
        label = gpu_label(gpu)
        if gpu.lost:
            findings.append(
                Finding(
                    code="gpu-lost",
                    severity=FAIL,
                    title=f"{label} has fallen off the bus",
                    detail="NVML answers \"GPU is lost\" for it: the GPU stopped responding (Xid 79), from power, "
                        "heat, a PCIe fault or a driver crash. Every CUDA call on it fails.",
                    hint="Reboot (or reset with `nvidia-smi -r` when nothing uses it); if it repeats, check power, "
                        "cooling and seating, then `nvidia-bug-report.sh`. Meanwhile hide it with CUDA_VISIBLE_DEVICES.",
                    source=NVML_SOURCE,
                    gpu_index=gpu.index,
                )
            )
            continue
        if gpu.remapped_rows_failure:
            findings.append(
                Finding(
                    code="gpu-row-remap-failure",
                    severity=FAIL,
                    title=f"{label}: a memory row could not be remapped",
                    detail="NVML reports a row-remapping failure: the GPU has run out of spare memory rows for its "
                        "uncorrectable errors, and its memory can no longer be trusted.",
                    hint="Take the GPU out of service and contact the vendor (RMA); hide it with CUDA_VISIBLE_DEVICES meanwhile.",
                    source=NVML_SOURCE,
                    gpu_index=gpu.index,
                )
            )
        if gpu.ecc_uncorrectable_volatile:
            findings.append(
                Finding(
                    code="gpu-ecc-uncorrectable",
                    severity=FAIL,
                    title=f"{label}: {gpu.ecc_uncorrectable_volatile} uncorrectable ECC error(s) since the driver loaded",
                    detail="Uncorrectable memory errors kill the CUDA contexts that hit them (\"uncorrectable ECC error "
                        "encountered\") and leave the GPU needing a reset.",
                    hint="Reset the GPU (`nvidia-smi -r`) or reboot; if the count grows again, retire the GPU.",
                    source=NVML_SOURCE,
                    gpu_index=gpu.index,
                )
            )
        if gpu.remapped_rows_pending:
            findings.append(
                Finding(
                    code="gpu-row-remap-pending",
                    severity=WARN,
                    title=f"{label}: a memory row remapping waits for a GPU reset",
                    detail="NVML reports a pending row remap: a faulty memory row will only be replaced after the GPU is "
                        "reset; until then the error can recur.",
                    hint="Reset the GPU (`nvidia-smi -r`) or reboot when it is idle.",
                    source=NVML_SOURCE,
                    gpu_index=gpu.index,
                )
            )
        if gpu.retired_pages_pending:
            findings.append(
                Finding(
                    code="gpu-retired-pages-pending",
                    severity=WARN,
                    title=f"{label}: memory pages wait to be retired at the next reset",
                    detail="NVML reports pages pending retirement after ECC errors; they stay in use until the GPU is reset.",
                    hint="Reset the GPU (`nvidia-smi -r`) or reboot when it is idle.",
                    source=NVML_SOURCE,
                    gpu_index=gpu.index,
                )
            )
        if gpu.persistence_mode is False:
            findings.append(
                Finding(
                    code="gpu-persistence-off",
                    severity=INFO,
                    title=f"{label}: persistence mode is off",
                    detail="The driver tears the GPU state down when no program uses it, so the first CUDA call of each "
                        "program pays the initialisation (up to seconds). Nothing fails because of it.",
                    hint="For servers: `sudo nvidia-smi -pm 1` or the nvidia-persistenced service.",
                    source=NVML_SOURCE,
                    gpu_index=gpu.index,
                )
            )
    return findings


def check_mig(ctx: CheckContext) -> list[Finding]:
    host, facts = ctx.host, ctx.facts
    if not facts.nvml_ok:
        return []
    findings = []
    for gpu in host.gpus_in_scope:
        if not gpu.mig_enabled:
            continue
        label = gpu_label(gpu)
        if not gpu.mig_devices:
            findings.append(
                Finding(
                    code="mig-no-instances",
                    severity=FAIL,
                    title=f"{label} is in MIG mode but has no MIG instances",
                    detail="A GPU in MIG mode runs CUDA only inside GPU/compute instances; with none created CUDA sees "
                        "no device on it (\"no CUDA-capable device is detected\").",
                    hint="Create instances (`sudo nvidia-smi mig -cgi 9,9 -C`, profiles from `nvidia-smi mig -lgip`) "
                        "or turn MIG off (`sudo nvidia-smi -i N -mig 0` and reset the GPU).",
                    source=NVML_SOURCE,
                    gpu_index=gpu.index,
                )
            )
            continue
        parts = [
            f"{mig.name or 'MIG ' + str(mig.index)} ({_gib_exact(mig.memory_total_bytes) if mig.memory_total_bytes else 'memory unknown'}, {mig.uuid or 'no UUID'})"
            for mig in gpu.mig_devices
        ]
        findings.append(
            Finding(
                code="mig-instances",
                severity=INFO,
                title=f"{label} is split into {len(gpu.mig_devices)} MIG instance(s)",
                detail="; ".join(parts) + ". A CUDA process uses one MIG instance: select it with "
                    "CUDA_VISIBLE_DEVICES=MIG-<uuid>.",
                source=NVML_SOURCE,
                gpu_index=gpu.index,
            )
        )
    return findings


def check_memory(ctx: CheckContext) -> list[Finding]:
    host, target = ctx.host, ctx.target
    if target is None or target.min_memory_bytes is None:
        return []
    want = target.min_memory_bytes
    view = host.visibility
    findings = []
    if view.mig_devices:
        for parent, mig in view.mig_devices:
            if mig.memory_total_bytes is not None and mig.memory_total_bytes < want:
                findings.append(
                    Finding(
                        code="gpu-memory-low",
                        severity=WARN,
                        title=f"MIG instance {mig.name or mig.uuid} on GPU {parent} has {_gib_exact(mig.memory_total_bytes)}, less than {_gib_exact(want)}",
                        detail="A workload sized for --min-memory will run out of memory (\"CUDA out of memory\").",
                        hint="Use a larger MIG profile or a whole GPU.",
                        source=NVML_SOURCE,
                        gpu_index=parent,
                    )
                )
        return findings
    unknown = [gpu for gpu in host.gpus_in_scope if gpu.memory_total_bytes is None]
    if unknown:
        findings.append(
            Finding(
                code="gpu-memory-unknown",
                severity=INFO,
                title=f"--min-memory not checked for {', '.join(gpu_label(g) for g in unknown)}: memory unknown",
                detail="NVML gave no memory size (or the GPU was given with --gpu, and a product name does not fix its "
                    "memory: an A100 has 40 or 80 GB).",
                hint="Check on the real host, or on a snapshot taken there (`cudadoctor probe --output`).",
                source=NVML_SOURCE,
            )
        )
    for gpu in host.gpus_in_scope:
        size = gpu.memory_total_bytes
        if size is not None and size < want:
            findings.append(
                Finding(
                    code="gpu-memory-low",
                    severity=WARN,
                    title=f"{gpu_label(gpu)} has {_gib_exact(size)}, less than the {_gib_exact(want)} asked for",
                    detail="A workload sized for --min-memory will fail with \"CUDA out of memory\" on this GPU.",
                    hint="Use a GPU with more memory, shrink the batch or model, or hide this GPU with CUDA_VISIBLE_DEVICES.",
                    source=NVML_SOURCE if gpu.source == "nvml" else "--gpu",
                    gpu_index=gpu.index,
                )
            )
    return findings


def check_capabilities(ctx: CheckContext) -> list[Finding]:
    host, table = ctx.host, ctx.table
    if not table.features:
        return []
    # What the table says of a compute capability is worked out once per table, not once per host.
    summaries: dict[Optional[ComputeCapability], tuple[str, str]] = table.memo("gpu-capabilities")
    if None not in summaries:
        summaries[None] = ("", "; ".join(dict.fromkeys(table.cite(f.source) for f in table.features)))
    sources = summaries[None][1]
    findings = []
    for gpu in host.gpus_in_scope:
        cc = host.cc(gpu)
        if cc is None:
            continue
        summary = summaries.get(cc)
        if summary is None:
            has = [f"{f.name} (>= {f.min_cc})" for f in table.features if cc >= f.min_cc]
            lacks = [f"{f.name} (needs >= {f.min_cc})" for f in table.features if cc < f.min_cc]
            detail = ("Has: " + ", ".join(has) + ". " if has else "") + ("Lacks: " + ", ".join(lacks) + "." if lacks else "")
            summary = summaries[cc] = (f", compute capability {cc}: {len(has)} of {len(table.features)} listed features", detail.strip())
        said, detail = summary
        findings.append(
            Finding(
                code="gpu-capabilities",
                severity=INFO,
                title=f"{gpu_label(gpu)}{said}",
                detail=detail,
                source=sources,
                gpu_index=gpu.index,
            )
        )
    return findings
