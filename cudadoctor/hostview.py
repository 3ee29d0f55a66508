"""Pure helpers that read derived facts off HostFacts + the table (shared by rules and recommender)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .facts import GpuFacts, HostFacts
from .table import CompatTable, WheelVariant
from .versions import ComputeCapability, CudaVersion, DriverVersion, VersionError
from .visibility import visibility_of


@dataclass(frozen=True)
class DriverSupport:
    """How a driver relates to one CUDA version."""

    tier: str  # "full" | "minor-compat" | "too-old" | "unknown"
    driver: Optional[DriverVersion]
    driver_cuda: Optional[CudaVersion]  # the newest CUDA the driver fully supports
    full_min: Optional[DriverVersion]  # Table 3 minimum for the CUDA minor
    compat_min: Optional[DriverVersion]  # minor-version-compatibility floor for the CUDA major


def driver_version(facts: HostFacts) -> Optional[DriverVersion]:
    if not facts.driver.driver_version:
        return None
    try:
        return DriverVersion.parse(facts.driver.driver_version)
    except VersionError:
        return None


def driver_cuda(facts: HostFacts, table: CompatTable) -> Optional[CudaVersion]:
    """The CUDA version the driver supports: NVML's answer, else derived from the table."""
    if facts.driver.cuda_driver_version:
        try:
            return CudaVersion.parse(facts.driver.cuda_driver_version).major_minor
        except VersionError:
            pass
    driver = driver_version(facts)
    return table.cuda_supported_by_driver(driver) if driver else None


def driver_support(facts: HostFacts, table: CompatTable, cuda: CudaVersion) -> DriverSupport:
    driver = driver_version(facts)
    supported = driver_cuda(facts, table)
    full_row = table.min_driver_full(cuda)
    compat_row = table.minor_compat_floor(cuda.major)
    full_min = full_row.min_driver_linux if full_row else None
    compat_min = compat_row.min_driver_linux if compat_row else None
    if driver is None and supported is None:
        tier = "unknown"
    elif supported is not None and supported >= cuda.major_minor:
        tier = "full"
    elif driver is not None and full_min is not None and driver >= full_min:
        tier = "full"
    elif driver is not None and compat_min is not None and driver >= compat_min and (
        supported is None or supported.major == cuda.major
    ):
        tier = "minor-compat"
    else:
        tier = "too-old"
    return DriverSupport(tier, driver, supported, full_min, compat_min)


def gpu_cc(gpu: GpuFacts, table: CompatTable) -> Optional[ComputeCapability]:
    """The GPU's compute capability: NVML's answer, else the catalogue's for its name."""
    if gpu.compute_capability:
        try:
            return ComputeCapability.parse(gpu.compute_capability)
        except VersionError:
            pass
    if gpu.name:
        model = table.gpu_model(gpu.name)
        if model:
            return model.cc
    return None


def gpu_label(gpu: GpuFacts) -> str:
    return f"GPU {gpu.index} ({gpu.name or 'unknown model'})"


def gpus_in_scope(facts: HostFacts) -> tuple[GpuFacts, ...]:
    """The GPUs a CUDA program started here would use; the GPU rules judge exactly these."""
    return visibility_of(facts).gpus


def gpu_runs_variant(facts: HostFacts, table: CompatTable, variant: WheelVariant, cc: ComputeCapability) -> str:
    """How a GPU runs a build: "sass" (machine code), "ptx" (JIT), or why not: "toolkit" (the CUDA
    release cannot target it), "not-built" (no code for it), "ptx-minor-compat" (only PTX, which a
    driver under minor-version compatibility cannot JIT-compile)."""
    toolkit = table.toolkit_architectures_for(variant.cuda)
    if toolkit is not None and not toolkit.supports(cc):
        return "toolkit"
    coverage = variant.coverage(cc)
    if coverage == "ptx" and facts.nvml_ok and driver_support(facts, table, variant.cuda).tier == "minor-compat":
        return "ptx-minor-compat"
    return coverage or "not-built"
