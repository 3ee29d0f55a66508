"""The host as the checks read it: the facts parsed once into typed values, with what the table
says about them. Built once per check run (``HostView.of``); pure.

Facts keep what the probes saw as text (a snapshot must round-trip exactly); this view turns
that text into versions, compute capabilities and the set of GPUs CUDA will use, once, so that
no rule parses a fact again.
"""

from __future__ import annotations

from ..compat.table import CompatTable, GpuModel, LastDriverBranch, WheelVariant, host_platform
from ..model.facts import NVML_OK, GpuFacts, HostFacts, ImageFacts, SystemFacts
from ..model.record import field, kept, record, replace
from ..model.versions import ComputeCapability, CudaVersion, DriverVersion, VersionError
from .visibility import Visibility, visibility_of, visible_devices_excluding

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Optional, Sequence, TypeVar

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
    forward_compat: bool = False  # full only through the cuda-compat libcuda in effect (data-center GPUs)


def _parsed(parse: Callable[[str], T], text: Optional[str]) -> Optional[T]:
    if not text:
        return None
    try:
        return parse(text)
    except VersionError:
        return None


_PARSED_TEXTS = 4096  # the texts come from outside: each memo of them stays bounded, as the table's GPU names do


def _parsed_once(table: CompatTable, name: str, parse: Callable[[str], T], text: Optional[str]) -> Optional[T]:
    """``_parsed``, once per table and text: a fleet's hosts report a few driver and CUDA versions,
    and one parsed object keeps the sort key and hash it has worked out for every host after."""
    if not isinstance(text, str) or not text:
        return _parsed(parse, text)
    memo = table.memo(name)
    known = memo.get(text, _UNPARSED)
    if known is _UNPARSED:
        if len(memo) >= _PARSED_TEXTS:
            memo.clear()
        known = memo[text] = _parsed(parse, text)
    return known  # type: ignore[no-any-return]


_UNPARSED = object()


def parsed_cuda(table: CompatTable, text: Optional[str]) -> Optional[CudaVersion]:
    """A CUDA version's text (a target's, say) parsed once per table, as the host's own are; None
    when it is not one."""
    return _parsed_once(table, "host.view.parsed-cuda-versions", CudaVersion.parse, text)


def _cc_and_model(table: CompatTable, gpu: GpuFacts) -> tuple[Optional[ComputeCapability], Optional[GpuModel]]:
    model = table.gpu_model(gpu.name) if gpu.name else None
    parsed = _parsed_once(table, "host.view.parsed-compute-capabilities", ComputeCapability.parse, gpu.compute_capability)
    if parsed is not None:
        # One object per compute capability (at most 1000 of them: two digits and one), whatever
        # its text ("9.0", "sm_90"): the memos keyed by it, on the table's variants, then find it
        # by identity, not by calling __eq__.
        parsed = table.memo("compute-capabilities").setdefault(parsed, parsed)
    return parsed or (model.cc if model else None), model


def forward_compat_in_effect(
    facts: HostFacts, native: Optional[CudaVersion], what_if_driver: bool
) -> Optional[tuple[CudaVersion, str, Optional[str]]]:
    """(CUDA, how, directory) of the forward-compatibility libcuda programs here load, when it
    provides a CUDA newer than the driver's own (``native``): --forward-compat first, then (for
    the host itself, not a what-if driver) the libcuda this process loaded, then a cuda-compat
    package the loader finds (LD_LIBRARY_PATH, ld.so.conf) or an image's compat/ directory."""
    system = facts.system
    if system is None:
        return None
    candidates: list[tuple[CudaVersion, str, Optional[str]]] = []
    for entry in system.cuda_compat:
        if entry.source == "what-if" and (cuda := _parsed(CudaVersion.parse, entry.cuda)) is not None:
            newer = native is None or cuda.major_minor > native
            return (cuda.major_minor, "what-if", entry.directory) if newer else None
    if what_if_driver:
        return None
    loaded = _parsed(CudaVersion.parse, system.libcuda.driver_version)
    if loaded is not None and native is not None and loaded.major_minor > native:
        directory = next((e.directory for e in system.cuda_compat if e.how == "loaded"), None)
        return loaded.major_minor, "loaded", directory
    for entry in system.cuda_compat:
        cuda = _parsed(CudaVersion.parse, entry.cuda)
        if entry.in_effect and cuda is not None and (native is None or cuda.major_minor > native):
            candidates.append((cuda.major_minor, entry.how or "in effect", entry.directory))
    return max(candidates, key=lambda c: c[0]) if candidates else None


def gpu_label(gpu: GpuFacts) -> str:
    return f"GPU {gpu.index} ({gpu.name or 'unknown model'})"


def gpus_label(gpus: Sequence[GpuFacts]) -> str:
    """"GPU 0 (Tesla K80)" for one GPU, "GPUs 0-1, 3 (Tesla K80)" for several of one model."""
    if len(gpus) == 1:
        return gpu_label(gpus[0])
    runs: list[list[int]] = []
    for index in sorted(g.index for g in gpus):
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    indexes = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
    return f"GPUs {indexes} ({gpus[0].name or 'unknown model'})"


@record
class DriverCeiling:
    """The last driver branch the GPUs in scope can run, and which of them it holds back."""

    row: LastDriverBranch
    gpus: str  # "Tesla K80 (Kepler)"

    @property
    def branch(self) -> int:
        return self.row.last_branch or 0

    def words(self) -> str:
        """"R470 is the last driver branch for Tesla K80 (Kepler)" (", as NVIDIA has announced" when only announced)."""
        how = ", as NVIDIA has announced" if self.row.evidence == "announced" else ""
        return f"R{self.branch} is the last driver branch for {self.gpus}{how}"


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
    # The CUDA a forward-compatibility libcuda in effect provides, newer than the driver's own, and how
    # it is known ("loaded": libcuda.so.1 reports it; "LD_LIBRARY_PATH"/"ld.so.conf": a cuda-compat
    # package the loader finds; "image": an image's compat/ directory; "what-if": --forward-compat).
    forward_compat_cuda: Optional[CudaVersion]
    forward_compat_how: Optional[str]
    forward_compat_directory: Optional[str]
    # Each GPU's compute capability and catalogue entry, by id() of its GpuFacts, beside the object
    # itself: an id is only that object's while it lives, so a look-up checks it is the same one
    # (a GPU from elsewhere, or from a copy of these facts, is looked up afresh).
    _gpus: dict[int, tuple[GpuFacts, Optional[ComputeCapability], Optional[GpuModel]]] = field(repr=False)

    @classmethod
    def of(cls, facts: HostFacts, table: CompatTable) -> "HostView":
        """The view of these facts against this table, built once per pair: the check, its answer
        and the fleet's candidates read one view (facts and table are frozen, so it is the same
        view each time; it is kept on the facts object beside them, as versions keep their keys)."""
        known = facts.__dict__.get("_host_view")
        if known is not None and known.table is table:
            return known  # type: ignore[no-any-return]
        view = cls._build(facts, table)
        facts.__dict__["_host_view"] = view
        return view

    @staticmethod
    def forget(facts: HostFacts) -> None:
        """Drop the view kept on these facts (a fleet, done judging, keeps only the results)."""
        facts.__dict__.pop("_host_view", None)

    @classmethod
    def _build(cls, facts: HostFacts, table: CompatTable) -> "HostView":
        driver = _parsed_once(table, "host.view.parsed-driver-versions", DriverVersion.parse, facts.driver.driver_version)
        nvml_said = parsed_cuda(table, facts.driver.cuda_driver_version)
        nvml_cuda = nvml_said.major_minor if nvml_said else None
        driver_cuda = nvml_cuda or (table.cuda_supported_by_driver(driver) if driver else None)
        what_if_driver = facts.driver.source == "what-if"
        gpus: dict[int, tuple[GpuFacts, Optional[ComputeCapability], Optional[GpuModel]]] = {}
        seen: dict[tuple[Optional[str], Optional[str]], tuple[Optional[ComputeCapability], Optional[GpuModel]]] = {}
        for gpu in facts.gpus:
            key = (gpu.name, gpu.compute_capability)  # eight identical GPUs are looked up once
            if key not in seen:
                seen[key] = _cc_and_model(table, gpu)
            gpus[id(gpu)] = (gpu,) + seen[key]
        compat = forward_compat_in_effect(facts, nvml_cuda or driver_cuda, what_if_driver)
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
            forward_compat_cuda=compat[0] if compat else None,
            forward_compat_how=compat[1] if compat else None,
            forward_compat_directory=compat[2] if compat else None,
            _gpus=gpus,
        )

    # --- GPUs --------------------------------------------------------------------------------

    # Cached on the view, outside the fields (a replace()d view works them out again): every
    # rule and the recommender read them, many times per check.
    @kept
    def gpus(self) -> tuple[GpuFacts, ...]:
        return self.facts.gpus

    @kept
    def gpus_in_scope(self) -> tuple[GpuFacts, ...]:
        """The GPUs a CUDA program started here would use; the GPU rules judge exactly these."""
        return self.visibility.gpus

    @kept
    def ccs_in_scope(self) -> tuple[ComputeCapability, ...]:
        """The distinct known compute capabilities of the GPUs in scope, in first-seen order: what
        decides whether a build runs on all of them (eight identical GPUs are asked about once)."""
        found: dict[ComputeCapability, None] = {}
        for gpu in self.gpus_in_scope:
            cc = self.cc(gpu)
            if cc is not None:
                found.setdefault(cc, None)
        return tuple(found)

    def cc(self, gpu: GpuFacts) -> Optional[ComputeCapability]:
        """The GPU's compute capability: NVML's answer, else the catalogue's for its name."""
        known = self._gpus.get(id(gpu))
        return known[1] if known is not None and known[0] is gpu else _cc_and_model(self.table, gpu)[0]

    def model(self, gpu: GpuFacts) -> Optional[GpuModel]:
        """The catalogue's entry for the GPU's name, when it knows it."""
        known = self._gpus.get(id(gpu))
        return known[2] if known is not None and known[0] is gpu else _cc_and_model(self.table, gpu)[1]

    def driver_ceiling(self) -> Optional["DriverCeiling"]:
        """The last driver branch every GPU in scope can run (the lowest among their architectures'),
        with the GPUs it holds back; None when no limit is on record. Computed once per view."""
        return self._ceiling

    @kept
    def _ceiling(self) -> Optional["DriverCeiling"]:
        ccs = {gpu.index: self.cc(gpu) for gpu in self.gpus_in_scope}
        row = self.table.driver_ceiling(cc for cc in ccs.values() if cc is not None)
        if row is None:
            return None
        held = [gpu for gpu in self.gpus_in_scope if ccs[gpu.index] in row.ccs]
        names = ", ".join(dict.fromkeys(gpu.name or "unknown model" for gpu in held))
        return DriverCeiling(row, f"{names} ({row.architecture})")

    def past_ceiling(self, driver: Optional[DriverVersion]) -> bool:
        """Whether ``driver`` is of a branch newer than the last one the GPUs in scope can run."""
        ceiling = self.driver_ceiling()
        return driver is not None and ceiling is not None and not ceiling.row.runs(driver)

    def _memo(self, name: str) -> dict:  # type: ignore[type-arg]
        """A per-view cache, kept outside the fields so that a replace()d view starts empty."""
        memo = self.__dict__.get(name)
        if memo is None:
            memo = self.__dict__[name] = {}
        return memo

    # The caches asked on every look-up (once kept, read from the instance dict, in C).
    @kept
    def _support_memo(self) -> dict[CudaVersion, DriverSupport]:
        return {}

    @kept
    def _support_by_id(self) -> dict[int, tuple[CudaVersion, DriverSupport]]:
        return {}

    @kept
    def _covers_memo(self) -> dict[int, tuple[WheelVariant, bool]]:
        return {}

    def visible_devices_excluding(self, excluded: Sequence[GpuFacts]) -> Optional[str]:
        """The CUDA_VISIBLE_DEVICES setting that keeps every GPU CUDA sees now except ``excluded``;
        memoised per set of excluded GPUs (a check asks once per blocked GPU, with the same set)."""
        memo = self._memo("_excluding_memo")
        key = tuple(gpu.index for gpu in excluded)
        if key not in memo:
            memo[key] = visible_devices_excluding(self.facts, excluded, self.visibility)
        return memo[key]  # type: ignore[no-any-return]

    def with_image_compat(self, image: Optional[ImageFacts]) -> "HostView":
        """This host as a container of ``image`` sees it: an image whose LD_LIBRARY_PATH names a
        compat directory (NVIDIA's images carry cuda-compat under /usr/local/cuda/compat) loads that
        libcuda, which provides the image's CUDA_VERSION. Unchanged when the image says no such thing,
        or when --forward-compat already says what is in effect."""
        if image is None or self.forward_compat_how == "what-if":
            return self
        directory = next(
            (e.rstrip("/") for e in (image.env_value("LD_LIBRARY_PATH") or "").split(":") if "compat" in e.strip("/").split("/")),
            None,
        )
        cuda = _parsed(CudaVersion.parse, image.env_value("CUDA_VERSION"))
        native = self.nvml_cuda or self.driver_cuda
        if directory is None or cuda is None or (native is not None and cuda.major_minor <= native):
            return self
        view = replace(self, forward_compat_cuda=cuda.major_minor, forward_compat_how="image", forward_compat_directory=directory)
        return view

    # --- the driver against a CUDA version ---------------------------------------------------

    @property
    def forward_compat_counts(self) -> bool:
        """Whether the forward-compatibility libcuda in effect counts for the driver support: every
        GPU in scope is one NVIDIA supports it on (data-center, Jetson). On GeForce it fails (error 804)."""
        forward = self.table.forward_compat
        if self.forward_compat_cuda is None or forward is None or not self.gpus_in_scope:
            return False
        models = [self.model(gpu) for gpu in self.gpus_in_scope]
        return all(m is not None and m.brand_class in forward.brand_classes for m in models)

    def support(self, cuda: CudaVersion) -> DriverSupport:
        """Full support, minor-version compatibility, too old, or unknown; computed once per CUDA minor."""
        # By the CUDA object first: the table's variants share theirs, and an id is hashed in C
        # where the version's own hash is a Python call (the entry holds the object, so its id stays its own).
        by_id = self._support_by_id.get(id(cuda))
        if by_id is not None and by_id[0] is cuda:
            return by_id[1]
        key = cuda.major_minor
        memo = self._support_memo
        known = memo.get(key)
        if known is None:
            known = memo[key] = self._support_for(key)
        self._support_by_id[id(cuda)] = (cuda, known)
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
        compat = self.forward_compat_cuda
        if tier != FULL and compat is not None and compat >= cuda and self.forward_compat_counts:
            return DriverSupport(FULL, driver, compat, full_min, compat_min, forward_compat=True)
        return DriverSupport(tier, driver, supported, full_min, compat_min)

    def runs(self, variant: WheelVariant, cc: ComputeCapability) -> str:
        """How a GPU runs a build: "sass" (machine code), "ptx" (JIT), or why not: "toolkit" (the CUDA
        release cannot target it), "not-built" (no code for it), "ptx-minor-compat" (only PTX, which a
        driver under minor-version compatibility cannot JIT-compile)."""
        built = build_verdict(self.table, variant, cc)
        if built == "ptx" and self.nvml_ok and self.support(variant.cuda).tier == MINOR_COMPAT:
            return "ptx-minor-compat"
        return built

    def covers(self, variant: WheelVariant) -> bool:
        """Whether the build runs ("sass" or "ptx") on every GPU in scope: asked once per distinct
        compute capability, and remembered per variant (the recommender asks it of the same
        variants again and again)."""
        memo = self._covers_memo
        known = memo.get(id(variant))
        if known is None or known[0] is not variant:  # checked to be the same variant object, as for runs()
            built, by_ptx = build_coverage(self.table, variant, self.ccs_in_scope)
            # As runs() says it GPU by GPU: PTX does not run under minor-version compatibility.
            covered = built and not (by_ptx and self.nvml_ok and self.support(variant.cuda).tier == MINOR_COMPAT)
            known = memo[id(variant)] = (variant, covered)
        return known[1]


def build_verdict(table: CompatTable, variant: WheelVariant, cc: ComputeCapability) -> str:
    """How a build runs on a compute capability as far as the table alone decides it: "sass", "ptx",
    "toolkit" or "not-built" (the driver's part is HostView.runs'). Worked out once per table, as
    every host asks it of the same variants. Kept on the variant (it is frozen), so that a build made
    for one host (an image's own arch list) takes its memo with it; each entry names the table it is for."""
    memo = variant.__dict__.get("_build_verdicts")
    if memo is None:
        memo = variant.__dict__["_build_verdicts"] = {}
    known = memo.get(cc)
    if known is None or known[0] is not table:
        toolkit = table.toolkit_architectures_for(variant.cuda)
        verdict = "toolkit" if toolkit is not None and not toolkit.supports(cc) else variant.coverage(cc) or "not-built"
        known = memo[cc] = (table, verdict)
    return known[1]


def build_coverage(table: CompatTable, variant: WheelVariant, ccs: tuple[ComputeCapability, ...]) -> tuple[bool, bool]:
    """(the build runs on every one of these compute capabilities as far as the table decides it,
    on some of them only by PTX): build_verdict over a host's GPUs, kept on the variant once per
    table and set of compute capabilities (hosts of one GPU model ask the same)."""
    memo = variant.__dict__.get("_build_coverage")
    if memo is None:
        memo = variant.__dict__["_build_coverage"] = {}
    known = memo.get(ccs)
    if known is None or known[0] is not table:
        verdicts = [build_verdict(table, variant, cc) for cc in ccs]
        known = memo[ccs] = (table, all(v in ("sass", "ptx") for v in verdicts), "ptx" in verdicts)
    return known[1], known[2]


def full_support_clause(host: HostView, support: DriverSupport, cuda: CudaVersion, floor: Optional[DriverVersion]) -> str:
    """What follows "upgrade to >= FLOOR" when full support needs more: " (>= FULL for full CUDA X.Y
    support)"; where FULL is past the last driver branch the GPUs in scope can run, that they get
    CUDA X.Y only under minor-version compatibility. Empty when the floor is full support."""
    full = support.full_min
    if full is None or floor is None or full == floor:
        return ""
    ceiling = host.driver_ceiling()
    if ceiling is not None and not ceiling.row.runs(full):
        return (f" (CUDA {cuda.major_minor} runs there only under minor-version compatibility: full support needs >= {full}, "
                f"and {ceiling.words()})")
    return f" (>= {full} for full CUDA {cuda.major_minor} support)"


def out_of_reach(host: HostView, floor: Optional[DriverVersion]) -> Optional[str]:
    """"No driver these GPUs can run is >= X (R470 is the last driver branch for Tesla K80 (Kepler))"
    when ``floor`` is past the last branch the GPUs in scope can run: what a hint says instead of
    "Upgrade the driver to >= X". None when an upgrade to ``floor`` is possible (or unknown)."""
    ceiling = host.driver_ceiling()
    if floor is None or ceiling is None or ceiling.row.runs(floor):
        return None
    return f"No driver these GPUs can run is >= {floor} ({ceiling.words()})"
