"""The compatibility table: its entries as frozen records (model/record.py) and the queries the rules and the
recommender ask. Pure.

``data/compat_table.json`` is the product. The consistency rules a table must meet (each naming
the bad entry when it breaks) live in :mod:`cudadoctor.compat.validate`; reading the file is
:func:`cudadoctor.app.loader.load_table`.
"""

from __future__ import annotations

import re
from functools import cached_property

from ..model.record import field, record, replace
from ..model.versions import ComputeCapability, CudaVersion, DriverVersion
from .ngc import NgcFamily, NgcRelease
from .install import install_command, wheel_page_url

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable, Optional

TABLE_SCHEMA = 1

# The placeholders a tag template may use, and what each matches when a tag is read back.
TEMPLATE_GROUPS = {
    "torch": r"\d+\.\d+",
    "torch_full": r"\d+\.\d+\.\d+",
    "variant": r"cu\d{2,3}",
    "cuda": r"\d+\.\d+",
    "cudnn_major": r"\d+",
}
BRAND_CLASSES = ("data-center", "professional", "consumer", "embedded")

# The family whose tags (pytorch-cuda:v2.9-cu128) are a naming convention for images a team builds
# or mirrors itself, not images anyone publishes.
CONVENTION_FAMILY = "pytorch-cuda"


class TableError(ValueError):
    """The table breaks a rule; the message names the entry and the rule."""


@record
class Source:
    key: str
    document: str
    section: str
    url: str = ""

    def cite(self) -> str:
        return f"{self.document}, {self.section}" if self.section else self.document


@record
class CudaRelease:
    """One row of NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" table."""

    version: CudaVersion
    label: str
    min_driver_linux: DriverVersion
    min_driver_windows: Optional[DriverVersion]
    source: str
    kind: str = ""  # "GA" | "update" | "RC", as NVIDIA labels the row
    note: str = ""
    # How the driver is known: "release-notes" (Table 3 as NVIDIA prints it), "redist-manifest" (the
    # driver NVIDIA pairs with the release in its own redistributable manifests: the toolkit's, with the
    # cuda-compat and cuda-drivers packages published with it, which for 13.0 GA to 13.2 Update 2 equal
    # Table 3's rows; or the driver's own, whose cuda_compat is built for the release: a driver that
    # runs it fully, which may lie above NVIDIA's floor, never below), "runfile-name" (the driver NVIDIA's own installer bundles, as its file
    # name cuda_X.Y.Z_<driver>_linux.run says, for updates no Table 3 prints) or "driver-branch" (NVIDIA
    # prints only the minor's driver branch, from 13.4 on: the row holds the branch number, 615). All are
    # NVIDIA's own publication and all decide verdicts.
    evidence: str = "release-notes"


CUDA_ROW_EVIDENCE = ("release-notes", "redist-manifest", "runfile-name", "driver-branch")


@record
class MinorVersionCompat:
    """The driver floor under which any toolkit of one CUDA major runs (minor-version compatibility)."""

    cuda_major: int
    min_driver_linux: DriverVersion
    min_driver_windows: Optional[DriverVersion]
    source: str
    max_driver_exclusive: Optional[DriverVersion] = None  # Table 2's "Max" column: drivers from here on are the next major's
    nvidia_text: str = ""  # the floor as NVIDIA words it (Table 2 prints branches, e.g. ">= 525")
    gives_up: tuple[str, ...] = ()  # what an application loses when it runs in this mode


@record
class ToolkitArchitectures:
    """The compute capabilities one CUDA toolkit release can compile for."""

    cuda: CudaVersion
    min_cc: ComputeCapability
    max_cc: ComputeCapability
    source: str
    note: str = ""

    def supports(self, cc: ComputeCapability) -> bool:
        return self.min_cc <= cc <= self.max_cc


@record
class ComputeCapabilityInfo:
    cc: ComputeCapability
    architecture: str
    examples: tuple[str, ...]
    source: str
    note: str = ""


@record
class GpuModel:
    """A product name and the names NVML reports for it."""

    name: str
    aliases: tuple[str, ...]
    cc: ComputeCapability
    architecture: str
    brand_class: str
    source: str
    unverified_aliases: tuple[str, ...] = ()  # NVML names not yet seen in a source; still matched
    alias_sources: tuple[str, ...] = ()  # where the exact NVML names in `aliases` were seen


# The platforms a wheel is built for, as the table names them; "linux" stands for either Linux machine.
PLATFORMS = ("linux-x86_64", "linux-aarch64", "windows")
ARM_PLATFORM = "linux-aarch64"
PLATFORM_WORDS = PLATFORMS + ("linux",)
# How an arch list is known, strongest first. "inferred" is written only by `table update` (a variant
# seen on the wheel index that no source describes); "unverified" records a variant whose arch list
# nothing settles: it is shown, never recommended.
EVIDENCE_LEVELS = ("binary", "build-script", "release-matrix", "third-party", "inferred", "unverified")


def host_platform(os_name: Optional[str], machine: Optional[str]) -> Optional[str]:
    """The table's name for a host's platform (sys.platform and uname machine), None when unknown."""
    if not os_name:
        return None
    if os_name.startswith("linux"):
        arch = {"amd64": "x86_64", "arm64": "aarch64"}.get((machine or "").lower(), (machine or "").lower())
        return f"linux-{arch}" if arch in ("x86_64", "aarch64") else None
    if os_name in ("win32", "cygwin", "windows"):
        return "windows"
    return os_name


def platform_label(platform: str) -> str:
    return {"linux-x86_64": "Linux x86_64", "linux-aarch64": "Linux aarch64", "windows": "Windows", "linux": "Linux"}.get(
        platform, platform
    )


@record
class PlatformBuild:
    """Where one platform's build of a variant carries other code than the variant's main arch list."""

    platform: str
    arch_list: tuple[ComputeCapability, ...]
    ptx: tuple[ComputeCapability, ...]
    evidence: str
    source: str
    note: str = ""
    ptx_unknown: bool = False  # as WheelVariant.ptx_unknown


@record
class WheelVariant:
    """One CUDA variant of one PyTorch release (cu121, ...), as its Linux x86_64 wheels were built
    (``platform_builds`` says where another platform's wheels differ)."""

    name: str
    cuda: CudaVersion
    arch_list: tuple[ComputeCapability, ...]  # machine code (SASS) is shipped for these
    ptx: tuple[ComputeCapability, ...]  # PTX is shipped for these (JIT-compilable on newer GPUs)
    cudnn: Optional[str]
    source: str
    evidence: str = ""  # how the arch list is known: one of EVIDENCE_LEVELS ("" on old tables: unstated)
    note: str = ""
    # The platforms its wheels are on record for; empty: not restricted on record (every platform).
    platforms: tuple[str, ...] = ()
    # The first patch release ("2.12.1") that has the variant; None: every patch release of the minor.
    first_patch: Optional[str] = None
    platform_builds: tuple[PlatformBuild, ...] = ()
    # Where the arch list came from when it was inferred (`table update`): "2.15 cu132", say.
    inferred_from: str = ""
    # True where no binary or equal source says what PTX the wheels carry (``"ptx": null`` in the
    # table): ``ptx`` is then empty, so no GPU is ever judged to run by JIT on such a build.
    ptx_unknown: bool = False
    # A variant `table update` took from an index other than the table's: that index's URL (pip's
    # --index-url for it; never the table's own). None: the table's wheel index.
    index_url: Optional[str] = None
    # Where a variant from an index was seen ("the wheel index HOST, read DATE"); "" for the table's own.
    seen_on: str = ""

    @property
    def verified(self) -> bool:
        """False when no source settles what the wheels carry: such a variant is never recommended."""
        return self.evidence != "unverified" and bool(self.arch_list)

    def available_on(self, platform: Optional[str]) -> bool:
        """Whether wheels of this variant are on record for the platform (an unknown platform: yes)."""
        if not self.platforms or platform is None:
            return True
        return platform in self.platforms or ("linux" in self.platforms and platform.startswith("linux-"))

    def for_platform(self, platform: Optional[str]) -> "WheelVariant":
        """The variant as built for this platform: its own arch list where the table records one
        (one object per platform, so what is worked out about it is kept)."""
        if not self.platform_builds:
            return self
        memo = self._platform_memo
        if platform not in memo:
            memo[platform] = self._built_for(platform)
        return memo[platform]

    @cached_property
    def _platform_memo(self) -> dict[Optional[str], "WheelVariant"]:
        return {}

    def _built_for(self, platform: Optional[str]) -> "WheelVariant":
        for build in self.platform_builds:
            if build.platform == platform:
                return replace(
                    self,
                    arch_list=build.arch_list, ptx=build.ptx, ptx_unknown=build.ptx_unknown,
                    evidence=build.evidence, source=build.source,
                    note=build.note or self.note, platform_builds=(),
                )
        return self

    def on_record_for(self, platform: Optional[str]) -> Optional["WheelVariant"]:
        """The variant as built for this platform, or None when no wheel of it is on record there.
        An arch list read off x86_64 wheels says nothing about Arm ones (from 2.12 on they carry
        other code), so on Linux aarch64 a variant is on record only where the table holds its
        Arm build (``platform_builds``)."""
        if not self.available_on(platform):
            return None
        if platform == ARM_PLATFORM and not any(b.platform == platform for b in self.platform_builds):
            return None  # listed for Linux perhaps, but what its Arm wheels carry is not on record
        return self.for_platform(platform)

    def platform_summary(self) -> str:
        return ", ".join(platform_label(p) for p in self.platforms) if self.platforms else "all platforms"

    @cached_property
    def _coverage_memo(self) -> dict[ComputeCapability, Optional[str]]:
        return {}

    def coverage(self, gpu: ComputeCapability) -> Optional[str]:
        """``"sass"`` when the wheel carries machine code this GPU runs, ``"ptx"`` when only by JIT,
        ``None`` when it carries nothing this GPU can run. PTX that is not on record (``ptx_unknown``)
        never counts: only machine code decides then. Worked out once per compute capability (the
        variant is frozen)."""
        memo = self._coverage_memo
        if gpu not in memo:
            memo[gpu] = self._coverage_of(gpu)
        return memo[gpu]

    def _coverage_of(self, gpu: ComputeCapability) -> Optional[str]:
        if any(gpu.runs_sass_built_for(built) for built in self.arch_list):
            return "sass"
        if any(gpu.can_jit_ptx_built_for(built) for built in self.ptx):
            return "ptx"
        return None

    def arch_summary(self) -> str:
        parts = [cc.sm for cc in self.arch_list]
        parts += [f"compute_{cc.major}{cc.minor} (PTX)" for cc in self.ptx]
        text = ", ".join(parts) if parts else "none"
        return f"{text} (PTX not on record)" if self.ptx_unknown else text


@record
class PytorchRelease:
    version: str  # "2.5"
    full_version: str  # "2.5.1"
    released: Optional[str]  # date of full_version; None where no source gives it
    default_variant: Optional[str]  # the CUDA variant of the plain `torch` wheel on the public index
    variants: tuple[WheelVariant, ...]
    source: str
    note: str = ""
    # False when the table records only some of the release's variants (the others are not yet
    # verified from a source); the report says so.
    variants_complete: bool = True
    # The platforms where the plain `torch` wheel on PyPI is the default variant; elsewhere PyPI serves
    # a CPU-only wheel. Empty: not on record.
    default_wheel_platforms: tuple[str, ...] = ()
    # How PyTorch's pages install its CUDA wheels (compat.install.INSTALL_STYLES): index-url from 2.0,
    # extra-index-url for 1.11-1.13, find-links (-f .../torch_stable.html) for 1.2-1.10, wheel-page for 1.0/1.1.
    install_style: str = "index-url"

    # The properties below are worked out once per release (it is frozen): every check reads them.
    @cached_property
    def unverified_variants(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variants if not v.verified)

    @cached_property
    def inferred_variants(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variants if v.evidence == "inferred")

    @cached_property
    def variant_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.variants)

    def install_version(self, variant: "WheelVariant") -> str:
        """The patch release to pin: the first one with the variant, else the newest."""
        return variant.first_patch or self.full_version

    @cached_property
    def key(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.version.split("."))

    @cached_property
    def _variants_by_name(self) -> dict[str, WheelVariant]:
        by_name: dict[str, WheelVariant] = {}
        for variant in self.variants:
            by_name.setdefault(variant.name, variant)
        return by_name

    def variant(self, name: str) -> Optional[WheelVariant]:
        return self._variants_by_name.get(name)


@record
class ImageFamily:
    """A family of images with one tag per (PyTorch release, CUDA variant)."""

    name: str
    repository: str
    tag_template: str  # placeholders: {torch} {torch_full} {variant} {cuda} {cudnn_major} {flavour}
    offers: tuple[tuple[str, tuple[str, ...]], ...]  # (release, variants); empty: every variant of every release
    source: str
    description: str = ""

    def variants_for(self, release: PytorchRelease) -> tuple[str, ...]:
        if not self.offers:
            return release.variant_names
        return self._offers_by_release.get(release.version, ())

    # Worked out once per family (it is frozen): every host's recommendation and target ask them.
    @cached_property
    def _offers_by_release(self) -> dict[str, tuple[str, ...]]:
        offers: dict[str, tuple[str, ...]] = {}
        for version, variants in self.offers:
            offers.setdefault(version, variants)  # the first entry of a release, as a scan finds it
        return offers

    @cached_property
    def _references(self) -> dict[tuple[str, str, str, CudaVersion, Optional[str]], str]:
        return {}

    def reference(self, release: PytorchRelease, variant: WheelVariant) -> str:
        key = (release.version, release.full_version, variant.name, variant.cuda, variant.cudnn)
        known = self._references.get(key)
        if known is None:
            cudnn_major = (variant.cudnn or "").split(".")[0]
            tag = self.tag_template.format(
                torch=release.version,
                torch_full=release.full_version,
                variant=variant.name,
                cuda=str(variant.cuda.major_minor),
                cudnn_major=cudnn_major,
            )
            known = self._references[key] = f"{self.repository}:{tag}"
        return known

    @cached_property
    def _tag_pattern(self) -> "re.Pattern[str]":
        pattern = ""
        import string  # only when a tag is read back (check --image)

        for literal, field_name, _, _ in string.Formatter().parse(self.tag_template):
            pattern += re.escape(literal)
            if field_name:
                group = TEMPLATE_GROUPS[field_name]
                # a placeholder used twice must match the same text both times
                pattern += f"(?P={field_name})" if f"(?P<{field_name}>" in pattern else f"(?P<{field_name}>{group})"
        return re.compile(pattern + r"\Z")

    def match_tag(self, tag: str) -> Optional[dict[str, str]]:
        """The placeholder values a tag of this family was made from, or None when it is not one of its tags."""
        found = self._tag_pattern.match(tag)
        return found.groupdict() if found else None


# The branch designations of NVIDIA's data-center driver pages ("Supported Drivers and CUDA Toolkit
# Versions"): Long Term Support, Production, New Feature. Only the first two have an end of life and
# are targets; a New Feature Branch is short-lived.
BRANCH_DESIGNATIONS = ("LTSB", "PB", "NFB")
TARGET_DESIGNATIONS = ("LTSB", "PB")


@record
class ForwardCompatBranch:
    """One driver-branch column of NVIDIA's forward-compatibility matrix, with its lifecycle from NVIDIA's
    data-center driver pages (designation, end of life)."""

    branch: int  # 535, 570, ...
    cuda: CudaVersion  # the CUDA release the branch was paired with
    compat_packages: tuple[CudaVersion, ...]  # cuda-compat-X-Y packages supported on it ("C" in the matrix)
    designation: Optional[str] = None  # LTSB / PB / NFB as the driver pages print it; None: not listed there
    end_of_life: Optional[str] = None  # "YYYY-MM" as the driver pages print it ("June 2026"); None: none printed
    source: str = ""  # the driver page that lists the branch ("" : only the matrix names it)

    def live_on(self, today: str) -> bool:
        """Whether the branch is a supported target on ``today`` (YYYY-MM-DD): a Long Term Support or
        Production Branch whose end-of-life month has not begun. A branch ends in the month NVIDIA
        prints, so it is no target from that month's first day on; a branch the driver pages do not
        list (no designation), or a New Feature Branch, is never one."""
        if self.designation not in TARGET_DESIGNATIONS or not self.end_of_life:
            return False
        return today[:7] < self.end_of_life

    def lifecycle(self) -> str:
        """"R535: Long Term Support Branch, end of life June 2026" style words, for findings."""
        names = {"LTSB": "Long Term Support Branch", "PB": "Production Branch", "NFB": "New Feature Branch"}
        if self.designation is None:
            return f"R{self.branch} is not among the branches NVIDIA's data-center driver pages list as supported"
        words = f"R{self.branch} is a {names.get(self.designation, self.designation)}"
        if self.end_of_life:
            words += f", end of life {month_words(self.end_of_life)}"
        return words


def month_words(month: str) -> str:
    """"2026-06" -> "June 2026"."""
    names = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
             "October", "November", "December")
    year, _, number = month.partition("-")
    try:
        return f"{names[int(number) - 1]} {year}"
    except (ValueError, IndexError):
        return month


@record
class ForwardCompat:
    """CUDA forward compatibility: newer CUDA on an older driver branch via the cuda-compat package."""

    package_template: str  # "cuda-compat-{major}-{minor}"
    brand_classes: tuple[str, ...]  # the GPU classes it is supported on
    note: str
    source: str
    select_brand_classes: tuple[str, ...] = ()  # classes where only some SKUs qualify (NGC Server Ready RTX)
    branches: tuple[ForwardCompatBranch, ...] = ()

    def package_for(self, cuda: CudaVersion) -> str:
        return self.package_template.format(major=cuda.major, minor=cuda.minor)

    def branch(self, number: int) -> Optional[ForwardCompatBranch]:
        for row in self.branches:
            if row.branch == number:
                return row
        return None

    def supported_on(self, driver_branch: int, cuda: CudaVersion) -> Optional[bool]:
        """Whether cuda-compat for this CUDA minor is supported on a driver branch: None when the branch is
        not in NVIDIA's matrix at all (end of life or a New Feature Branch: not a target)."""
        row = self.branch(driver_branch)
        if row is None:
            return None
        return cuda.major_minor in row.compat_packages

    def live(self, driver_branch: int, today: str) -> bool:
        """Whether a driver branch is a supported target on ``today``: in the matrix, and live on NVIDIA's
        data-center driver pages (:meth:`ForwardCompatBranch.live_on`)."""
        row = self.branch(driver_branch)
        return row is not None and row.live_on(today)

    def live_branches(self, today: str) -> tuple[ForwardCompatBranch, ...]:
        return tuple(row for row in self.branches if row.live_on(today))


# How a last driver branch is known: "release-notes", NVIDIA's driver documentation prints it (its
# architecture matrix); "announced", NVIDIA has only announced it (no document of NVIDIA's prints it yet).
LAST_BRANCH_EVIDENCE = ("release-notes", "announced")


@record
class LastDriverBranch:
    """The last NVIDIA driver branch that supports an architecture's GPUs, as NVIDIA's "CUDA Toolkit,
    Driver, and Architecture Matrix" prints it ("Last Driver Support"); None while it is ongoing."""

    architecture: str
    ccs: tuple[ComputeCapability, ...]
    last_branch: Optional[int]  # 470, 580; None: still supported by new branches
    evidence: str
    source: str
    note: str = ""

    def runs(self, driver: DriverVersion) -> bool:
        """Whether a driver of this version supports these GPUs (its branch is not past the last one)."""
        return self.last_branch is None or driver.branch <= self.last_branch


@record
class Feature:
    """A GPU capability and the lowest compute capability that has it."""

    name: str
    min_cc: ComputeCapability
    source: str


@record
class CompatTable:
    schema: int
    updated: str
    path: str
    sources: tuple[Source, ...]
    cuda_releases: tuple[CudaRelease, ...]
    minor_version_compat: tuple[MinorVersionCompat, ...]
    toolkit_architectures: tuple[ToolkitArchitectures, ...]
    compute_capabilities: tuple[ComputeCapabilityInfo, ...]
    gpus: tuple[GpuModel, ...]
    pytorch_releases: tuple[PytorchRelease, ...]
    image_families: tuple[ImageFamily, ...]
    wheel_index_template: str
    forward_compat: Optional[ForwardCompat] = None
    features: tuple[Feature, ...] = ()
    last_branches: tuple[LastDriverBranch, ...] = ()  # per architecture, oldest first
    raw: Any = None  # the parsed JSON, for `table --json`
    # Every normalised GPU name -> its model, built by the validator (which normalises every name
    # anyway to refuse duplicates); empty for a table built otherwise: then built on first use.
    gpu_names: dict[str, GpuModel] = field(default_factory=dict, repr=False)
    ngc_releases: tuple[NgcRelease, ...] = ()  # NGC PyTorch monthly releases, oldest first
    ngc_families: tuple[NgcFamily, ...] = ()  # image families of kind "ngc" (NVIDIA's NGC PyTorch repository)
    default_ngc: Optional[str] = None  # a config file made this NGC family the default (no --family)

    @cached_property
    def _memos(self) -> dict[str, dict[Any, Any]]:
        return {}

    def memo(self, name: str) -> dict[Any, Any]:
        """A cache that lives as long as this table (it is frozen): what the checks work out from
        the table alone (a compute capability's feature summary, say) is worked out once, not once
        per host. Keyed by the caller's own values; a replace()d table starts empty."""
        memos = self._memos
        found = memos.get(name)
        if found is None:
            found = memos[name] = {}
        return found

    # --- sources ---------------------------------------------------------------------------

    @cached_property
    def _sources(self) -> dict[str, Source]:
        return {s.key: s for s in self.sources}

    def cite(self, key: str) -> str:
        cited = self._citations.get(key)
        if cited is None:
            source = self._sources.get(key)
            cited = self._citations[key] = source.cite() if source else key
        return cited

    @cached_property
    def _citations(self) -> dict[str, str]:
        return {}  # each key's citation, worded once per table (every host's findings cite the same sources)

    # --- driver <-> CUDA -------------------------------------------------------------------

    @cached_property
    def _rows_by_minor(self) -> dict[tuple[int, int], tuple[CudaRelease, ...]]:
        rows: dict[tuple[int, int], list[CudaRelease]] = {}
        for row in self.cuda_releases:
            rows.setdefault((row.version.major, row.version.minor), []).append(row)
        return {minor: tuple(found) for minor, found in rows.items()}

    @cached_property
    def _min_driver_full(self) -> dict[tuple[int, int], CudaRelease]:
        lowest = {}
        for minor, rows in self._rows_by_minor.items():
            final = [r for r in rows if r.kind != "RC"] or list(rows)
            lowest[minor] = min(final, key=lambda r: r.min_driver_linux)
        return lowest

    def rows_for(self, cuda: CudaVersion) -> tuple[CudaRelease, ...]:
        """Every Table 3 row (GA, updates and release candidates) of one CUDA minor."""
        return self._rows_by_minor.get((cuda.major, cuda.minor), ())

    def min_driver_full(self, cuda: CudaVersion) -> Optional[CudaRelease]:
        """The lowest driver that fully supports this CUDA minor (its GA row in Table 3; release candidates don't count)."""
        return self._min_driver_full.get((cuda.major, cuda.minor))

    @cached_property
    def _compat_floors(self) -> dict[int, MinorVersionCompat]:
        floors: dict[int, MinorVersionCompat] = {}
        for row in self.minor_version_compat:
            floors.setdefault(row.cuda_major, row)
        return floors

    def minor_compat_floor(self, cuda_major: int) -> Optional[MinorVersionCompat]:
        return self._compat_floors.get(cuda_major)

    def cuda_supported_by_driver(self, driver: DriverVersion) -> Optional[CudaVersion]:
        """The newest CUDA minor whose GA minimum driver this driver meets."""
        best: Optional[CudaVersion] = None
        for row in self.cuda_releases:
            if row.kind != "RC" and row.min_driver_linux <= driver:
                candidate = row.version.major_minor
                if best is None or candidate > best:
                    best = candidate
        return best

    @cached_property
    def _toolkit_by_minor(self) -> dict[tuple[int, int], ToolkitArchitectures]:
        rows: dict[tuple[int, int], ToolkitArchitectures] = {}
        for row in self.toolkit_architectures:
            rows.setdefault((row.cuda.major, row.cuda.minor), row)
        return rows

    def toolkit_architectures_for(self, cuda: CudaVersion) -> Optional[ToolkitArchitectures]:
        return self._toolkit_by_minor.get((cuda.major, cuda.minor))

    def first_toolkit_for(self, cc: ComputeCapability) -> Optional[ToolkitArchitectures]:
        """The oldest CUDA release that can build for this compute capability, when that release is
        where the architecture entered (not merely the oldest row the table has)."""
        rows = sorted(self.toolkit_architectures, key=lambda row: row.cuda)
        for index, row in enumerate(rows):
            if row.supports(cc):
                return row if index > 0 and not rows[0].supports(cc) else None
        return None

    # --- compute capabilities and products --------------------------------------------------

    def feature(self, name: str) -> Optional[Feature]:
        for feature in self.features:
            if feature.name == name:
                return feature
        return None

    @cached_property
    def _cc_rows(self) -> dict[ComputeCapability, ComputeCapabilityInfo]:
        return {row.cc: row for row in reversed(self.compute_capabilities)}

    def cc_info(self, cc: ComputeCapability) -> Optional[ComputeCapabilityInfo]:
        return self._cc_rows.get(cc)

    @cached_property
    def _last_branch_rows(self) -> dict[ComputeCapability, LastDriverBranch]:
        return {cc: row for row in self.last_branches for cc in row.ccs}

    def last_branch_for(self, cc: ComputeCapability) -> Optional[LastDriverBranch]:
        """The table's last-driver-branch entry for a compute capability (None: none on record)."""
        return self._last_branch_rows.get(cc)

    def driver_ceiling(self, ccs: Iterable[ComputeCapability]) -> Optional[LastDriverBranch]:
        """The highest driver branch GPUs of all these compute capabilities can run together: the
        entry with the lowest last branch among them; None when no limit is on record (every one
        still supported, or not in the table). The one policy every driver upgrade consults."""
        # Each compute capability once, in first-seen order (eight identical GPUs give one): the
        # first entry with the lowest branch is the same one.
        ended = [row for row in map(self.last_branch_for, dict.fromkeys(ccs)) if row is not None and row.last_branch is not None]
        return min(ended, key=lambda row: row.last_branch or 0) if ended else None

    @cached_property
    def _gpu_names(self) -> dict[str, GpuModel]:
        if self.gpu_names:
            return self.gpu_names
        names: dict[str, GpuModel] = {}
        for model in self.gpus:
            for name in (model.name,) + model.aliases + model.unverified_aliases:
                names.setdefault(normalise_gpu_name(name), model)
        return names

    @cached_property
    def _gpu_model_memo(self) -> dict[str, Optional[GpuModel]]:
        return {}

    def gpu_model(self, name: str) -> Optional[GpuModel]:
        """Look a product up by the short name users type or the name NVML reports (once per name)."""
        memo = self._gpu_model_memo
        if name not in memo:
            if len(memo) > 4096:  # names come from outside: the memo stays bounded
                memo.clear()
            memo[name] = self._gpu_model_of(name)
        return memo[name]

    def _gpu_model_of(self, name: str) -> Optional[GpuModel]:
        key = normalise_gpu_name(name)
        if key in self._gpu_names:
            return self._gpu_names[key]
        # NVML names carry memory sizes and form factors ("NVIDIA A100-SXM4-80GB"):
        # fall back to the longest catalogue name that the reported name starts with.
        best: Optional[GpuModel] = None
        best_len = 0
        for candidate, model in self._gpu_names.items():
            if key.startswith(candidate + " ") and len(candidate) > best_len:
                best, best_len = model, len(candidate)
        return best

    # --- PyTorch ----------------------------------------------------------------------------

    def release(self, version: str) -> Optional[PytorchRelease]:
        """A release by minor ("2.9") or by any patch of it ("2.9.0", "2.9.1"): patches of one minor
        ship the same CUDA variants."""
        wanted = version.strip()
        parts = wanted.split(".")
        if len(parts) == 3 and all(p.isdigit() for p in parts):
            wanted = ".".join(parts[:2])
        return self._releases_by_version.get(wanted)

    @cached_property
    def _releases_by_version(self) -> dict[str, PytorchRelease]:
        by_version: dict[str, PytorchRelease] = {}
        for release in self.pytorch_releases:
            by_version.setdefault(release.version, release)  # the first of a version, as a scan finds it
        return by_version

    @cached_property
    def _newest_with_sass(self) -> dict[tuple[ComputeCapability, Optional[str]], Optional[PytorchRelease]]:
        return {}

    def newest_release_with_sass_for(self, cc: ComputeCapability, platform: Optional[str] = None) -> Optional[PytorchRelease]:
        """The newest release with a verified variant whose wheels for this platform (None: any)
        carry machine code for this compute capability."""
        key = (cc, platform)
        if key not in self._newest_with_sass:
            def carries(v: WheelVariant) -> bool:
                built = v.on_record_for(platform) if platform else v
                return v.verified and built is not None and built.coverage(cc) == "sass"

            self._newest_with_sass[key] = next(
                (r for r in sorted(self.pytorch_releases, key=lambda r: r.key, reverse=True) if any(carries(v) for v in r.variants)),
                None,
            )
        return self._newest_with_sass[key]

    @cached_property
    def newest_release(self) -> PytorchRelease:
        return max(self.pytorch_releases, key=lambda r: r.key)

    @cached_property
    def releases_newest_first(self) -> tuple[PytorchRelease, ...]:
        """The PyTorch releases, newest first (sorted once per table)."""
        return tuple(sorted(self.pytorch_releases, key=lambda r: r.key, reverse=True))

    @cached_property
    def default_release(self) -> PytorchRelease:
        """The newest release with a verified variant: the default target. Where some of its variants
        are unverified or inferred, the report says which (never a silent fall-back to an older one)."""
        usable = [r for r in self.pytorch_releases if any(v.verified for v in r.variants)]
        return max(usable or self.pytorch_releases, key=lambda r: r.key)

    def family(self, name: str) -> Optional[ImageFamily]:
        for family in self.image_families:
            if family.name == name:
                return family
        for family in self.image_families:
            if family.repository == name:
                return family
        return None

    # --- NGC PyTorch containers -----------------------------------------------------------

    def ngc_family(self, name: str) -> Optional[NgcFamily]:
        return self._ngc_families_by_name.get(name)

    @cached_property
    def _ngc_families_by_name(self) -> dict[str, NgcFamily]:
        by_name: dict[str, NgcFamily] = {}
        for family in self.ngc_families:  # the first family with the name or repository, as a scan finds it
            by_name.setdefault(family.name, family)
            by_name.setdefault(family.repository, family)
        return by_name

    def ngc_release(self, release: str) -> Optional[NgcRelease]:
        for entry in self.ngc_releases:
            if entry.release == release:
                return entry
        return None

    def ngc_match(self, repository: str, tag: str) -> Optional[tuple[NgcFamily, str, Optional[NgcRelease]]]:
        """(family, YY.MM, the table's entry or None) when ``repository:tag`` is an NGC family's tag."""
        for family in self.ngc_families:
            if family.repository == repository:
                month = family.release_in_tag(tag)
                if month is not None:
                    return family, month, self.ngc_release(month)
        return None

    def compat_branches_for(self, cuda: CudaVersion, today: Optional[str] = None) -> Optional[tuple[int, ...]]:
        """The driver branches whose cuda-compat packages cover this CUDA minor (NVIDIA's matrix); with
        ``today``, only those live on that date (end-of-life and New Feature Branches left out)."""
        if self.forward_compat is None:
            return None
        return tuple(
            b.branch for b in self.forward_compat.branches
            if cuda.major_minor in b.compat_packages and (today is None or b.live_on(today))
        )

    def reference_date(self, today: Optional[str], probed_at: Optional[str] = None) -> str:
        """The date branch lifecycles are judged on: the run's date (the request's ``today``); without
        it, the later of the snapshot's date and the table's own review date (the run is no earlier
        than either: a branch dead when the table was reviewed is dead now, even for an old snapshot)."""
        if today:
            return today
        dates = [d for d in ((probed_at or "")[:10], self.updated) if d]
        return max(dates) if dates else ""

    def parse_family_reference(
        self, ref: str
    ) -> Optional[tuple[ImageFamily, PytorchRelease, WheelVariant]]:
        """Map an image reference ("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime") to the family, PyTorch
        release and CUDA variant it stands for; None when no family of the table makes that tag. Any patch
        release of a PyTorch minor counts as that release; a digest suffix is ignored."""
        text = ref.strip().split("@", 1)[0]
        for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
            if text.startswith(prefix):
                text = text[len(prefix):]
        repository, sep, tag = text.rpartition(":")
        if not sep or "/" in tag:
            return None
        if repository.startswith("library/"):
            repository = repository[len("library/"):]
        for family in self.image_families:
            if family.repository != repository:
                continue
            values = family.match_tag(tag)
            if values is None:
                continue
            found = _resolve_tag_values(self, family, values)
            if found is not None:
                return (family,) + found
        return None

    def install_command(self, release: PytorchRelease, variant: WheelVariant) -> Optional[str]:
        """The pip line PyTorch documents for this build of this release (None: download from its page);
        a build seen only on another index (`table update --index-url`) installs from that index."""
        index_url = self.index_url_of(variant)
        page = wheel_page_url(release.install_style, index_url, self.wheel_index_root())
        return install_command(
            release.install_style, release.version, release.install_version(variant), variant.name, index_url, page,
            variant.first_patch, plain_wheel=variant.name == release.default_variant,
        )

    def wheel_page_url(self, release: PytorchRelease, variant: WheelVariant) -> Optional[str]:
        """The find-links page the release's documented install names (None from 1.11 on)."""
        return wheel_page_url(release.install_style, self.wheel_index_url(variant.name), self.wheel_index_root())

    def wheel_index_url(self, variant: str) -> str:
        return self.wheel_index_template.format(variant=variant)

    def index_url_of(self, variant: "WheelVariant") -> str:
        """Where pip installs this variant from: the index it was seen on, else the table's wheel index."""
        return variant.index_url or self.wheel_index_url(variant.name)

    def wheel_index_root(self) -> str:
        """The index whose ``torch/`` page lists every variant's wheels: the template's part before
        ``{variant}`` (the default of `table update --index-url`; the URL lives only in the table)."""
        return self.wheel_index_template.split("{variant}", 1)[0].rstrip("/")


def _resolve_tag_values(
    table: CompatTable, family: ImageFamily, values: dict[str, str]
) -> Optional[tuple[PytorchRelease, WheelVariant]]:
    """The (release, variant) that a tag's placeholder values name, if the family offers it."""
    version = values.get("torch") or ".".join((values.get("torch_full") or "").split(".")[:2])
    release = table.release(version) if version else None
    if release is None:
        return None
    candidates = [release.variant(name) for name in family.variants_for(release)]
    for variant in candidates:
        if variant is None:
            continue
        if "variant" in values and values["variant"] != variant.name:
            continue
        if "cuda" in values and values["cuda"] != str(variant.cuda.major_minor):
            continue
        if "cudnn_major" in values and values["cudnn_major"] != (variant.cudnn or "").split(".")[0]:
            continue
        return release, variant
    return None


def normalise_gpu_name(name: str) -> str:
    """Case, vendor prefixes and punctuation do not distinguish products."""
    text = " ".join(name.lower().replace("_", " ").replace("-", " ").split())
    for prefix in ("nvidia ", "tesla ", "geforce ", "quadro "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text
