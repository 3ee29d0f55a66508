"""The host as the checks read it: the facts parsed once into typed values, with what the table
says about them. Built once per check run (``HostView.of``); pure.

Facts keep what the probes saw as text (a snapshot must round-trip exactly); this view turns
that text into versions, compute capabilities and the set of GPUs CUDA will use, once, so that
no rule parses a fact again.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, TypeVar

from ..compat.table import CompatTable, GpuModel, WheelVariant
from ..model.facts import NVML_OK, GpuFacts, HostFacts, SystemFacts
from ..model.record import field, record
from ..model.versions import ComputeCapability, CudaVersion, DriverVersion, VersionError
from .visibility import Visibility, visibility_of, visible_devices_excluding

T = TypeVar("T")

# How a driver relates to one CUDA version.
FULL = "full"
MINOR_COMPAT = "minor-compat"
TOO_OLD = "too-old"
UNKNOWN = "unknown"


@record
class DriverSupport:
    """How the host's driver relates to one CUDA version."""

    tier: str  # "full" | "minor-compat" | "too-old" | "unknown"
    driver: Optional[DriverVersion]
    driver_cuda: Optional[CudaVersion]  # the newest CUDA the driver fully supports
    full_min: Optional[DriverVersion]  # Table 3 minimum for the CUDA minor
    compat_min: Optional[DriverVersion]  # minor-version-compatibility floor for the CUDA major


def _parsed(parse: Callable[[str], T], text: Optional[str]) -> Optional[T]:
    if not text:
        return None
    try:
        return parse(text)
    except VersionError:
        return None


def gpu_label(gpu: GpuFacts) -> str:
    return f"GPU {gpu.index} ({gpu.name or 'unknown model'})"


@record
class HostView:
    facts: HostFacts
    table: CompatTable
    nvml_ok: bool
    driver: Optional[DriverVersion]  # NVML's (or --driver's) version, parsed
    nvml_cuda: Optional[CudaVersion]  # the CUDA version NVML says the driver supports (major.minor)
    driver_cuda: Optional[CudaVersion]  # the CUDA the driver supports: NVML's answer, else the table's
    planned: bool  # the driver or a GPU was given with --driver/--gpu: this is a plan, not this host
    system: Optional[SystemFacts]  # the OS facts, when they describe the host being judged
    visibility: Visibility  # what CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER leave CUDA
    _cc: dict[int, Optional[ComputeCapability]] = field(repr=False)  # by id() of the GpuFacts
    _model: dict[int, Optional[GpuModel]] = field(repr=False)
    # Answers worked out on first use, once per check run: driver support per CUDA minor, and how
    # each GPU runs each variant (by id() of the table's variant; the table outlives the view).
    _support: dict[CudaVersion, DriverSupport] = field(default_factory=dict, repr=False)
    _runs: dict[tuple[int, ComputeCapability], str] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, facts: HostFacts, table: CompatTable) -> "HostView":
        driver = _parsed(DriverVersion.parse, facts.driver.driver_version)
        parsed_cuda = _parsed(CudaVersion.parse, facts.driver.cuda_driver_version)
        nvml_cuda = parsed_cuda.major_minor if parsed_cuda else None
        driver_cuda = nvml_cuda or (table.cuda_supported_by_driver(driver) if driver else None)
        what_if_driver = facts.driver.source == "what-if"
        models: dict[int, Optional[GpuModel]] = {}
        ccs: dict[int, Optional[ComputeCapability]] = {}
        seen: dict[tuple[Optional[str], Optional[str]], tuple[Optional[GpuModel], Optional[ComputeCapability]]] = {}
        for gpu in facts.gpus:
            key = (gpu.name, gpu.compute_capability)  # eight identical GPUs are looked up once
            if key not in seen:
                model = table.gpu_model(gpu.name) if gpu.name else None
                seen[key] = (model, _parsed(ComputeCapability.parse, gpu.compute_capability) or (model.cc if model else None))
            models[id(gpu)], ccs[id(gpu)] = seen[key]
        return cls(
            facts=facts,
            table=table,
            nvml_ok=facts.driver.nvml_state == NVML_OK,
            driver=driver,
            nvml_cuda=nvml_cuda,
            driver_cuda=driver_cuda,
            planned=what_if_driver or any(gpu.source == "what-if" for gpu in facts.gpus),
            system=None if what_if_driver else facts.system,
            visibility=visibility_of(facts),
            _cc=ccs,
            _model=models,
        )

    # --- GPUs --------------------------------------------------------------------------------

    @property
    def gpus(self) -> tuple[GpuFacts, ...]:
        return self.facts.gpus

    @property
    def gpus_in_scope(self) -> tuple[GpuFacts, ...]:
        """The GPUs a CUDA program started here would use; the GPU rules judge exactly these."""
        return self.visibility.gpus

    def cc(self, gpu: GpuFacts) -> Optional[ComputeCapability]:
        """The GPU's compute capability: NVML's answer, else the catalogue's for its name."""
        return self._cc.get(id(gpu))

    def model(self, gpu: GpuFacts) -> Optional[GpuModel]:
        """The catalogue's entry for the GPU's name, when it knows it."""
        return self._model.get(id(gpu))

    def visible_devices_excluding(self, excluded: Sequence[GpuFacts]) -> Optional[str]:
        """The CUDA_VISIBLE_DEVICES setting that keeps every GPU CUDA sees now except ``excluded``."""
        return visible_devices_excluding(self.facts, excluded, self.visibility)

    # --- the driver against a CUDA version ---------------------------------------------------

    def support(self, cuda: CudaVersion) -> DriverSupport:
        """Full support, minor-version compatibility, too old, or unknown; computed once per CUDA minor."""
        key = cuda.major_minor
        known = self._support.get(key)
        if known is None:
            known = self._support[key] = self._support_for(key)
        return known

    def _support_for(self, cuda: CudaVersion) -> DriverSupport:
        driver, supported = self.driver, self.driver_cuda
        full_row = self.table.min_driver_full(cuda)
        compat_row = self.table.minor_compat_floor(cuda.major)
        full_min = full_row.min_driver_linux if full_row else None
        compat_min = compat_row.min_driver_linux if compat_row else None
        if driver is None and supported is None:
            tier = UNKNOWN
        elif supported is not None and supported >= cuda:
            tier = FULL
        elif driver is not None and full_min is not None and driver >= full_min:
            tier = FULL
        elif driver is not None and compat_min is not None and driver >= compat_min and (
            supported is None or supported.major == cuda.major
        ):
            tier = MINOR_COMPAT
        else:
            tier = TOO_OLD
        return DriverSupport(tier, driver, supported, full_min, compat_min)

    def runs(self, variant: WheelVariant, cc: ComputeCapability) -> str:
        """How a GPU runs a build: "sass" (machine code), "ptx" (JIT), or why not: "toolkit" (the CUDA
        release cannot target it), "not-built" (no code for it), "ptx-minor-compat" (only PTX, which a
        driver under minor-version compatibility cannot JIT-compile)."""
        key = (id(variant), cc)
        known = self._runs.get(key)
        if known is None:
            known = self._runs[key] = self._runs_for(variant, cc)
        return known

    def _runs_for(self, variant: WheelVariant, cc: ComputeCapability) -> str:
        toolkit = self.table.toolkit_architectures_for(variant.cuda)
        if toolkit is not None and not toolkit.supports(cc):
            return "toolkit"
        coverage = variant.coverage(cc)
        if coverage == "ptx" and self.nvml_ok and self.support(variant.cuda).tier == MINOR_COMPAT:
            return "ptx-minor-compat"
        return coverage or "not-built"
