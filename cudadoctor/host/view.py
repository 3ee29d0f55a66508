"""The host as the checks read it: the facts parsed once into typed values, with what the table
says about them. Built once per check run (``HostView.of``); pure.

Facts keep what the probes saw as text (a snapshot must round-trip exactly); this view turns
that text into versions, compute capabilities and the set of GPUs CUDA will use, once, so that
no rule parses a fact again.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence, TypeVar

from ..compat.table import CompatTable, GpuModel, WheelVariant, host_platform
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


def _cc_and_model(table: CompatTable, gpu: GpuFacts) -> tuple[Optional[ComputeCapability], Optional[GpuModel]]:
    model = table.gpu_model(gpu.name) if gpu.name else None
    return _parsed(ComputeCapability.parse, gpu.compute_capability) or (model.cc if model else None), model


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
    # The host's platform as the table names it ("linux-x86_64", "windows"); None when unknown.
    platform: Optional[str]
    # Each GPU's compute capability and catalogue entry, by id() of its GpuFacts, beside the object
    # itself: an id is only that object's while it lives, so a look-up checks it is the same one
    # (a GPU from elsewhere, or from a copy of these facts, is looked up afresh).
    _gpus: dict[int, tuple[GpuFacts, Optional[ComputeCapability], Optional[GpuModel]]] = field(repr=False)

    @classmethod
    def of(cls, facts: HostFacts, table: CompatTable) -> "HostView":
        driver = _parsed(DriverVersion.parse, facts.driver.driver_version)
        parsed_cuda = _parsed(CudaVersion.parse, facts.driver.cuda_driver_version)
        nvml_cuda = parsed_cuda.major_minor if parsed_cuda else None
        driver_cuda = nvml_cuda or (table.cuda_supported_by_driver(driver) if driver else None)
        what_if_driver = facts.driver.source == "what-if"
        gpus: dict[int, tuple[GpuFacts, Optional[ComputeCapability], Optional[GpuModel]]] = {}
        seen: dict[tuple[Optional[str], Optional[str]], tuple[Optional[ComputeCapability], Optional[GpuModel]]] = {}
        for gpu in facts.gpus:
            key = (gpu.name, gpu.compute_capability)  # eight identical GPUs are looked up once
            if key not in seen:
                seen[key] = _cc_and_model(table, gpu)
            gpus[id(gpu)] = (gpu,) + seen[key]
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
            platform=host_platform(facts.system.os, facts.system.machine) if facts.system else None,
            _gpus=gpus,
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
        known = self._gpus.get(id(gpu))
        return known[1] if known is not None and known[0] is gpu else _cc_and_model(self.table, gpu)[0]

    def model(self, gpu: GpuFacts) -> Optional[GpuModel]:
        """The catalogue's entry for the GPU's name, when it knows it."""
        known = self._gpus.get(id(gpu))
        return known[2] if known is not None and known[0] is gpu else _cc_and_model(self.table, gpu)[1]

    def _memo(self, name: str) -> dict:  # type: ignore[type-arg]
        """A per-view cache, kept outside the fields so that a replace()d view starts empty."""
        memo = self.__dict__.get(name)
        if memo is None:
            memo = self.__dict__[name] = {}
        return memo

    def visible_devices_excluding(self, excluded: Sequence[GpuFacts]) -> Optional[str]:
        """The CUDA_VISIBLE_DEVICES setting that keeps every GPU CUDA sees now except ``excluded``;
        memoised per set of excluded GPUs (a check asks once per blocked GPU, with the same set)."""
        memo = self._memo("_excluding_memo")
        key = tuple(gpu.index for gpu in excluded)
        if key not in memo:
            memo[key] = visible_devices_excluding(self.facts, excluded, self.visibility)
        return memo[key]  # type: ignore[no-any-return]

    # --- the driver against a CUDA version ---------------------------------------------------

    def support(self, cuda: CudaVersion) -> DriverSupport:
        """Full support, minor-version compatibility, too old, or unknown; computed once per CUDA minor."""
        key = cuda.major_minor
        memo = self._memo("_support")
        known = memo.get(key)
        if known is None:
            known = memo[key] = self._support_for(key)
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
        key = (id(variant), cc)  # checked to be the same variant object, as for the GPUs above
        memo = self._memo("_runs")
        known = memo.get(key)
        if known is None or known[0] is not variant:
            known = memo[key] = (variant, self._runs_for(variant, cc))
        return known[1]

    def _runs_for(self, variant: WheelVariant, cc: ComputeCapability) -> str:
        toolkit = self.table.toolkit_architectures_for(variant.cuda)
        if toolkit is not None and not toolkit.supports(cc):
            return "toolkit"
        coverage = variant.coverage(cc)
        if coverage == "ptx" and self.nvml_ok and self.support(variant.cuda).tier == MINOR_COMPAT:
            return "ptx-minor-compat"
        return coverage or "not-built"
