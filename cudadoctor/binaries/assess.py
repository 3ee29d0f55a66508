"""The scan's verdict: each package's binaries against each GPU, as findings, answer first.

Pure: the files were read by the probe, the GPUs and the driver come from NVML or the what-if
flags; this decides, once, what the text report and the JSON both show.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..model.findings import FAIL, Finding, verdict
from ..model.record import record, replace
from .judge import JIT, NATIVE, NO_KERNEL_IMAGE, PTX_TOO_NEW, CodeVerdict, arch_list, judge_code, parse_cc
from .ptx_isa import SOURCE as PTX_ISA_SOURCE
from .scan import ScannedFile, ScanSource

RULES_SOURCE = "NVIDIA CUDA C++ Programming Guide, Binary Compatibility and PTX Compatibility"
ISA_SOURCE = f"{RULES_SOURCE}; {PTX_ISA_SOURCE['document']}"


@record
class GpuUnderTest:
    """A GPU the binaries are judged against (from NVML or --gpu)."""

    index: int
    name: str
    compute_capability: Optional[str]  # "12.0"; None when NVML did not say

    @property
    def sm(self) -> str:
        return "sm_" + (self.compute_capability or "?").replace(".", "")


@record
class DriverUnderTest:
    version: Optional[str]
    cuda: Optional[str]  # the CUDA release the driver supports ("12.8")


@record
class BinaryResult:
    """One file with GPU code (or one that could not be read), and how it meets each GPU."""

    file: ScannedFile
    verdicts: tuple[tuple[int, CodeVerdict], ...]  # (GPU index, verdict)


@record
class PackageResult:
    name: str  # the distribution's name, or the file's path when no package owns it
    version: Optional[str]
    owned: bool
    binaries: tuple[BinaryResult, ...]
    findings: tuple[Finding, ...] = ()  # this package's, also in ScanResult.findings

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name


@record
class ScanResult:
    sources: tuple[ScanSource, ...]
    gpus: tuple[GpuUnderTest, ...]
    driver: Optional[DriverUnderTest]
    packages: tuple[PackageResult, ...]
    findings: tuple[Finding, ...]
    files_read: int

    @property
    def verdict(self) -> str:
        return verdict(self.findings)

    @property
    def fails(self) -> bool:
        return any(f.severity == FAIL for f in self.findings)


def assess(sources: Sequence[ScanSource], gpus: Sequence[GpuUnderTest], driver: Optional[DriverUnderTest]) -> ScanResult:
    driver_cuda = parse_cc(driver.cuda) if driver is not None and driver.cuda else None
    groups: dict[tuple[str, Optional[str], bool], list[ScannedFile]] = {}
    files_read = 0
    for source in sources:
        for scanned in source.files:
            files_read += 1
            if scanned.code is not None and not scanned.code.has_gpu_code:
                continue
            owned = scanned.package is not None
            groups.setdefault((scanned.package or scanned.path, scanned.version, owned), []).append(scanned)
    judged = [g for g in gpus if g.compute_capability and parse_cc(g.compute_capability)]
    packages = []
    for (name, version, owned), files in sorted(groups.items(), key=lambda item: (not item[0][2], item[0][0].lower())):
        results = []
        for scanned in files:
            verdicts: tuple[tuple[int, CodeVerdict], ...] = ()
            if scanned.code is not None:
                verdicts = tuple((g.index, judge_code(scanned.code, parse_cc(g.compute_capability or "") or (0, 0), driver_cuda)) for g in judged)
            results.append(BinaryResult(file=scanned, verdicts=verdicts))
        package = PackageResult(name=name, version=version, owned=owned, binaries=tuple(results))
        packages.append(replace(package, findings=tuple(_package_findings(package, judged, driver))))
    findings: list[Finding] = []
    if not gpus:
        findings.append(
            Finding(
                "scan-no-gpu",
                "info",
                "No GPU to judge the binaries against: their GPU code is listed only",
                detail="NVML named no GPU on this host and no --gpu was given.",
                hint="Give --gpu MODEL (and --driver VERSION) to plan for a host, e.g. --gpu \"RTX 5090\" --driver 580.65.06.",
                subject="gpu",
            )
        )
    for gpu in gpus:
        if gpu not in judged:
            findings.append(
                Finding(
                    "scan-gpu-unknown",
                    "warn",
                    f"GPU {gpu.index} ({gpu.name}): its compute capability is unknown, so no binary was judged against it",
                    hint="Give --gpu X.Y.",
                    subject="gpu",
                    gpu_index=gpu.index,
                )
            )
    for package in packages:
        findings.extend(package.findings)
    if not packages:
        findings.append(
            Finding(
                "scan-no-gpu-code",
                "info",
                f"No CUDA GPU code found in {files_read} shared object{'s' if files_read != 1 else ''}",
                detail="; ".join(s.location for s in sources),
                subject="binaries",
            )
        )
    return ScanResult(
        sources=tuple(sources), gpus=tuple(gpus), driver=driver, packages=tuple(packages), findings=tuple(findings), files_read=files_read
    )


def _package_findings(package: PackageResult, gpus: Sequence[GpuUnderTest], driver: Optional[DriverUnderTest]) -> list[Finding]:
    found: list[Finding] = []
    for result in package.binaries:
        if result.file.error is not None:
            found.append(
                Finding(
                    "binary-unreadable",
                    "warn",
                    f"{package.label}: {result.file.path} could not be read: its GPU code is unknown"
                    if package.owned
                    else f"{result.file.path} could not be read: its GPU code is unknown",
                    detail=result.file.error or "",
                    hint="Reinstall the package (the file may be cut short); if it persists, report the file."
                    if package.owned
                    else "Rebuild or replace the file (it may be cut short).",
                    subject="binaries",
                )
            )
    readable = [r for r in package.binaries if r.file.code is not None]
    if not readable:
        return found
    found.extend(_runtime_findings(package, readable, driver))
    for gpu in gpus:
        by_status: dict[str, list[tuple[BinaryResult, CodeVerdict]]] = {}
        for result in readable:
            for index, code_verdict in result.verdicts:
                if index == gpu.index:
                    by_status.setdefault(code_verdict.status, []).append((result, code_verdict))
        if NO_KERNEL_IMAGE in by_status:
            failing = by_status[NO_KERNEL_IMAGE]
            found.append(
                Finding(
                    "binary-no-kernel-image",
                    "fail",
                    f"{package.label} has no code for {gpu.sm}: it will fail on the {gpu.name}",
                    detail="; ".join(f"{r.file.path} carries {_carries(r)}" for r, _ in failing)
                    + f". CUDA answers \"no kernel image is available for execution on the device\" when it loads them on a {gpu.sm} GPU.",
                    hint=_fix_hint(package, gpu),
                    source=RULES_SOURCE,
                    subject="binaries",
                    gpu_index=gpu.index,
                )
            )
        if PTX_TOO_NEW in by_status:
            failing = by_status[PTX_TOO_NEW]
            needs = max((v.needs_cuda or "?" for _, v in failing), key=_version_key)
            isa = max((v.used.ptx_isa or "?" for _, v in failing if v.used is not None), key=_version_key)
            driver_text = f"driver {driver.version} (CUDA {driver.cuda})" if driver is not None and driver.cuda else "this driver"
            found.append(
                Finding(
                    "binary-ptx-too-new",
                    "fail",
                    f"{package.label} has only PTX for the {gpu.name}, and {driver_text} cannot JIT-compile its PTX ISA {isa}",
                    detail="; ".join(f"{r.file.path} carries {_carries(r)}" for r, _ in failing)
                    + f". PTX ISA {isa} needs a driver for CUDA {needs} or newer; an older one answers "
                    "\"the provided PTX was compiled with an unsupported toolchain\".",
                    hint=f"Upgrade the driver to one that supports CUDA {needs}, or install a build of {package.name} with {gpu.sm} machine code.",
                    source=ISA_SOURCE,
                    subject="binaries",
                    gpu_index=gpu.index,
                )
            )
        if JIT in by_status and not (NO_KERNEL_IMAGE in by_status or PTX_TOO_NEW in by_status):
            jit = by_status[JIT]
            unknown = [v.needs_cuda for _, v in jit if v.needs_cuda]
            found.append(
                Finding(
                    "binary-jit-only",
                    "warn",
                    f"{package.label} runs on the {gpu.name} only by JIT-compiling PTX: its first start compiles the kernels",
                    detail="; ".join(f"{r.file.path} carries {_carries(r)}" for r, _ in jit)
                    + (f". The driver's CUDA is unknown: JIT needs a driver for CUDA {max(unknown, key=_version_key)} or newer." if unknown else "."),
                    hint=f"Prefer a build of {package.name} with {gpu.sm} machine code; set CUDA_CACHE_MAXSIZE so the JIT cache keeps the result.",
                    source=RULES_SOURCE,
                    subject="binaries",
                    gpu_index=gpu.index,
                )
            )
        if set(by_status) == {NATIVE}:
            found.append(
                Finding(
                    "binary-ok",
                    "ok",
                    f"{package.label} carries {gpu.sm} machine code for the {gpu.name}",
                    subject="binaries",
                    gpu_index=gpu.index,
                )
            )
    return found


def _runtime_findings(package: PackageResult, readable: Sequence[BinaryResult], driver: Optional[DriverUnderTest]) -> list[Finding]:
    """A binary linking a CUDA runtime of a newer major than the driver supports does not load,
    whatever GPU code it carries (minor-version compatibility works only within one major)."""
    driver_cuda = parse_cc(driver.cuda) if driver is not None and driver.cuda else None
    if driver is None or driver_cuda is None:
        return []
    newer = [r for r in readable if r.file.code is not None and (r.file.code.cuda_runtime or "0").isdigit() and int(r.file.code.cuda_runtime or 0) > driver_cuda[0]]
    if not newer:
        return []
    runtime = max(int(r.file.code.cuda_runtime or 0) for r in newer if r.file.code is not None)
    return [
        Finding(
            "binary-runtime-too-new",
            "fail",
            f"{package.label} links the CUDA {runtime} runtime: driver {driver.version} supports CUDA {driver.cuda}, so it will not load",
            detail="; ".join(f"{r.file.path} needs libcudart.so.{r.file.code.cuda_runtime}" for r in newer if r.file.code is not None)
            + ". CUDA answers \"CUDA driver version is insufficient for CUDA runtime version\" (minor-version compatibility "
            "spans only one major release).",
            hint=f"Upgrade the driver to one that supports CUDA {runtime}, or install a build of {package.name} made for CUDA {driver_cuda[0]}.",
            source="NVIDIA CUDA Compatibility guide (minor-version compatibility within a major release)",
            subject="binaries",
        )
    ]


def _carries(result: BinaryResult) -> str:
    code = result.file.code
    if code is None:
        return "unknown code"
    return arch_list(code.entries) or "no GPU code"


def _fix_hint(package: PackageResult, gpu: GpuUnderTest) -> str:
    arch = gpu.compute_capability or "X.Y"
    if not package.owned:
        return f"Rebuild it for {gpu.sm} (nvcc -gencode arch=compute_{arch.replace('.', '')},code={gpu.sm}), or run it on a GPU it was built for."
    return (
        f"Install a build of {package.name} made for {gpu.sm}: a newer wheel that lists it, or a source build with "
        f"TORCH_CUDA_ARCH_LIST=\"{arch}\" (pip install --no-binary {package.name} {package.name}); or run on a GPU it was built for."
    )


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in text.split("."))
