"""Installed torch: a CPU build, CUDA too new for the driver, missing GPU architectures, and CUDA
that is unavailable for another reason."""

from __future__ import annotations

from ..compat.install import DEFAULT_INSTALL_STYLE, install_command
from ..compat.table import CompatTable, PytorchRelease
from ..host.view import DriverSupport, gpu_label, out_of_reach
from ..model.facts import TorchFacts
from ..model.findings import FAIL, INFO, OK, WARN, Finding
from ..model.versions import ComputeCapability, CudaVersion, PackageVersion, VersionError, parse_package_version
from .context import CheckContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

SOURCE = "the installed torch (package metadata, torch/version.py)"

RUNTIME_SOURCE = "the installed torch, imported (--torch-runtime)"

BINARY_SOURCE = "the installed torch's binaries (the .nv_fatbin sections of torch/lib/libtorch_cuda*.so)"


def _release_of(torch: TorchFacts, table: CompatTable) -> Optional[PytorchRelease]:
    version = _package_version(torch)
    release = version.major_minor if version is not None else None
    return table.release(release) if release else None


def _package_version(torch: TorchFacts) -> Optional[PackageVersion]:
    try:
        return parse_package_version(torch.version) if torch.version else None
    except VersionError:
        return None


def _runtime_arch(arch_list: tuple[str, ...]) -> tuple[list[ComputeCapability], list[ComputeCapability]]:
    """(SASS, PTX) compute capabilities from torch.cuda.get_arch_list() (sm_86, compute_90, sm_90a)."""
    sass: list[ComputeCapability] = []
    ptx: list[ComputeCapability] = []
    for entry in arch_list:
        kind, _, number = entry.partition("_")
        try:
            cc = ComputeCapability.parse(number.rstrip("af"))
        except VersionError:
            continue
        (sass if kind == "sm" else ptx if kind == "compute" else []).append(cc)
    return sass, ptx


def check_torch(ctx: CheckContext) -> list[Finding]:
    host, facts = ctx.host, ctx.facts
    torch = facts.torch
    if torch is None or not torch.installed or host.planned:
        return []  # the torch installed here says nothing about a planned (--driver/--gpu) host
    source = RUNTIME_SOURCE if torch.runtime_probed else SOURCE
    name = f"torch {torch.version} ({torch.variant or 'unknown build'})"
    gpus = host.gpus_in_scope
    usable = facts.nvml_ok and bool(gpus)
    findings: list[Finding] = []
    if torch.runtime_error:
        findings.append(
            Finding(
                code="torch-runtime-error",
                severity=WARN,
                title=f"Could not inspect {name} at run time",
                detail=torch.runtime_error + ".",
                hint="Run `python -c 'import torch; print(torch.cuda.is_available())'` to see the full error.",
                source=RUNTIME_SOURCE,
            )
        )
    if torch.variant == "cpu" or (torch.runtime_probed and not torch.runtime_error and torch.cuda is None):
        if usable:
            findings.append(
                Finding(
                    code="torch-cpu-build",
                    severity=WARN,
                    title=f"{name} is a CPU-only build on a host with a usable NVIDIA GPU",
                    detail=f"It was built without CUDA (torch.version.cuda is None), so it never uses the GPU: "
                        "torch.cuda.is_available() is False and `.cuda()` raises \"Torch not compiled with CUDA enabled\". "
                        f"Installed at {torch.location}.",
                    hint=_cpu_hint(ctx, torch)
                        or "No CUDA build of torch in the table fits this host as it is: fix the driver findings first, "
                        "then `cudadoctor recommend --wheel`.",
                    source=source,
                )
            )
        return findings
    cuda = _parse_cuda(torch.cuda)
    if cuda is not None and facts.nvml_ok:
        support = host.support(cuda)
        if support.tier == "too-old":
            floor = support.compat_min or support.full_min
            findings.append(
                Finding(
                    code="torch-cuda-too-new",
                    severity=FAIL,
                    title=f"{name} needs CUDA {cuda.major_minor}, newer than driver {support.driver or 'here'} supports",
                    detail=f"The driver supports CUDA {support.driver_cuda or 'an older release'}; CUDA {cuda.major_minor} "
                        f"needs driver >= {floor}. torch warns \"The NVIDIA driver on your system is too old (found "
                        f"version {_found_version(support)})\" and torch.cuda.is_available() is False.",
                    hint=(out_of_reach(host, floor) or f"Upgrade the driver to >= {floor}")
                        + (f", or reinstall a torch build this driver runs: {hint}" if (hint := _cpu_hint(ctx, torch)) else "."),
                    source=source,
                )
            )
    findings.extend(_arch_findings(ctx, torch, name, BINARY_SOURCE if torch.arch_evidence == "binary" else source))
    findings.extend(_binary_findings(ctx, torch, name))
    failing = any(f.severity == FAIL for f in findings)
    if torch.runtime_probed and torch.cuda_available is False and not failing and not torch.runtime_error:
        findings.append(
            Finding(
                code="torch-cuda-unavailable",
                severity=FAIL,
                title=f"{name}: torch.cuda.is_available() is False",
                detail="torch could not initialise CUDA"
                    + (f": {torch.cuda_error}" if torch.cuda_error else " and gave no reason")
                    + ". The other findings above name the host's problems, if any.",
                hint="Fix what the error names; the findings above (driver, device nodes, visibility, container) "
                    "cover the usual causes.",
                source=RUNTIME_SOURCE,
            )
        )
    if not any(f.severity in (FAIL, WARN) for f in findings):
        if torch.runtime_probed and torch.cuda_available:
            title = f"{name} sees {torch.device_count} CUDA device(s)"
            extra = ", ".join(p for p in (f"cuDNN {torch.cudnn}" if torch.cudnn else "", f"NCCL {torch.nccl}" if torch.nccl else "") if p)
            findings.append(Finding(code="torch-ok", severity=OK, title=title, detail=extra, source=RUNTIME_SOURCE))
        elif usable:
            findings.append(
                Finding(
                    code="torch-ok",
                    severity=OK,
                    title=f"{name} fits this driver and these GPUs",
                    detail=f"Installed at {torch.location}.",
                    source=source,
                )
            )
        else:
            findings.append(Finding(
                code="torch-installed",
                severity=INFO,
                title=f"{name} is installed",
                detail=f"At {torch.location}.",
                source=source,
            ))
    findings.extend(_extension_findings(ctx, torch))  # after torch-ok: torch itself fits, an extension beside it may not
    return findings


def _found_version(support: DriverSupport) -> str:
    return str(support.driver.raw if support.driver else "unknown")


def _parse_cuda(text: Optional[str]) -> Optional[CudaVersion]:
    if not text:
        return None
    try:
        return CudaVersion.parse(text)
    except VersionError:
        return None


def _cpu_hint(ctx: CheckContext, torch: TorchFacts) -> Optional[str]:
    """The pip command for a build that fits this host: the installed release if one of its variants
    fits, else the target's release, else the newest release that fits; never a build the same report
    rejects."""
    table, target = ctx.table, ctx.target
    installed = _release_of(torch, table)
    parsed = _package_version(torch)
    version = parsed.public if parsed is not None else (torch.version or "").partition("+")[0]
    candidates = [installed] if installed is not None else []
    target_release = table.release(target.torch) if target is not None else None
    if target_release is not None:
        candidates.append(target_release)
    candidates += sorted(table.pytorch_releases, key=lambda r: r.key, reverse=True)
    fit = ctx.first_fit(candidates)
    if fit is None:
        return None
    release, rec = fit
    why = f"(the {rec.variant} build; `cudadoctor recommend --wheel` explains the choice)"
    variant = release.variant(rec.variant or "")
    if release.install_style != DEFAULT_INSTALL_STYLE and variant is not None:
        # 1.0-1.13: the form PyTorch's previous-versions page documents for the release (-f, --extra-index-url).
        index_url = table.wheel_index_url(variant.name)
        page = table.wheel_page_url(release, variant)
        patch = version if release is installed and version else release.install_version(variant)
        line = install_command(release.install_style, release.version, patch, variant.name, index_url, page,
                               plain_wheel=variant.name == release.default_variant)
        if line is None:
            return f"download the {variant.name} wheel of torch {patch} for your Python from {page} and install it  {why}"
        return line.replace("pip install ", "pip install --force-reinstall ", 1) + f"  {why}"
    pin = f"torch=={version}" if release is installed else f"torch=={rec.first_patch or release.version + '.*'}"
    return f"pip install --force-reinstall '{pin}' --index-url {rec.wheel_index_url or table.wheel_index_url(rec.variant or '')}  {why}"


def _extension_findings(ctx: CheckContext, torch: TorchFacts) -> list[Finding]:
    """Each package beside torch that requires it, judged from its own binaries: the extension
    that fails a job torch alone runs ("no kernel image" only once it is imported)."""
    host = ctx.host
    findings = []
    for extension in torch.extensions:
        label = f"{extension.name} {extension.version}" if extension.version else extension.name
        if not extension.arch_list:
            continue
        sass, ptx = _runtime_arch(extension.arch_list)
        for gpu in host.gpus_in_scope:
            cc = host.cc(gpu)
            if cc is None or any(cc.runs_sass_built_for(b) for b in sass) or any(cc.can_jit_ptx_built_for(b) for b in ptx):
                continue
            findings.append(
                Finding(
                    code="torch-extension-arch-missing",
                    severity=FAIL,
                    title=f"{label}, installed beside {torch.version}, has no code for {gpu_label(gpu)}, {cc.sm}",
                    detail=f"Its binaries carry {', '.join(extension.arch_list)}. torch itself may run, but once {extension.name} is "
                        "imported its kernels fail with \"no kernel image is available for execution on the device\".",
                    hint=f"Install a build of {extension.name} made for {cc.sm} (a newer wheel, or a source build with "
                        f"TORCH_CUDA_ARCH_LIST=\"{cc.major}.{cc.minor}\"); `cudadoctor scan` lists every binary.",
                    source=BINARY_SOURCE,
                    gpu_index=gpu.index,
                )
            )
    return findings


def _binary_findings(ctx: CheckContext, torch: TorchFacts, name: str) -> list[Finding]:
    """What the binaries say beside the table: unreadable, or another arch list than the table's."""
    if torch.binary_error:
        return [
            Finding(
                code="torch-binary-unreadable",
                severity=INFO,
                title=f"{name}: its CUDA library could not be read, so the table's arch list is used",
                detail=torch.binary_error + ".",
                hint="Reinstall torch if the file is cut short; `--torch-runtime` asks torch itself.",
                source=BINARY_SOURCE,
            )
        ]
    if torch.arch_evidence != "binary":
        return []
    release = _release_of(torch, ctx.table)
    variant = release.variant(torch.variant or "") if release else None
    if variant is None or not variant.arch_list:
        return []
    sass, ptx = _runtime_arch(torch.arch_list)
    if set(sass) == set(variant.arch_list) and (variant.ptx_unknown or set(ptx) == set(variant.ptx)):
        return []
    read = ", ".join(torch.arch_list)
    return [
        Finding(
            code="torch-arch-table-disagrees",
            severity=INFO,
            title=f"{name}: its binaries carry another arch list than the table records for {release.version if release else ''} {variant.name}",
            detail=f"Read from its binaries: {read}. The table: {variant.arch_summary()} ({ctx.table.cite(variant.source)}, evidence "
                f"{variant.evidence}). The binaries are what runs, so they are what was judged: a custom or nightly build, or a table to correct.",
            hint="If this is the published wheel, report the table row (with `cudadoctor scan --json` of the wheel).",
            source=BINARY_SOURCE,
        )
    ]


def _arch_findings(ctx: CheckContext, torch: TorchFacts, name: str, source: str) -> list[Finding]:
    host, table = ctx.host, ctx.table
    findings = []
    if torch.arch_list:
        sass, ptx = _runtime_arch(torch.arch_list)
        built = ", ".join(torch.arch_list)

        def covers(cc: ComputeCapability) -> bool:
            return any(cc.runs_sass_built_for(b) for b in sass) or any(cc.can_jit_ptx_built_for(b) for b in ptx)

    else:
        release = _release_of(torch, table)
        variant = release.variant(torch.variant or "") if release else None
        if variant is None:
            return []
        built = variant.arch_summary()

        def covers(cc: ComputeCapability) -> bool:
            return variant.coverage(cc) is not None

    for gpu in host.gpus_in_scope:
        cc = host.cc(gpu)
        if cc is None or covers(cc):
            continue
        findings.append(
            Finding(
                code="torch-arch-missing",
                severity=FAIL,
                title=f"{name} carries no code for {gpu_label(gpu)}, {cc.sm}",
                detail=f"It was built for {built}. torch warns \"{cc.sm} is not compatible with the current PyTorch "
                    "installation\" and kernels fail with \"no kernel image is available for execution on the device\".",
                hint="Reinstall a torch build whose arch list includes this GPU (`cudadoctor recommend --wheel`), "
                    "or hide the GPU with CUDA_VISIBLE_DEVICES.",
                source=source,
                gpu_index=gpu.index,
            )
        )
    return findings
