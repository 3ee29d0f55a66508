"""The compatibility table: loading, validation and queries.

``data/compat_table.json`` is the product; this module reads it once into frozen dataclasses,
checks every consistency rule (and names the bad entry when one breaks), and answers the
questions the rules and the recommender ask. Nothing here does I/O except :func:`load_table`.
"""

from __future__ import annotations

import json
import os
import re
import string
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Optional

from .versions import ComputeCapability, CudaVersion, DriverVersion, VersionError

TABLE_SCHEMA = 1
TABLE_ENV = "CUDADOCTOR_TABLE"

_VARIANT_RE = re.compile(r"^cu(\d{2,3})$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_RELEASE_RE = re.compile(r"^\d+\.\d+$")
_FULL_RELEASE_RE = re.compile(r"^\d+\.\d+\.\d+$")
BRAND_CLASSES = ("data-center", "professional", "consumer", "embedded")


class TableError(ValueError):
    """The table breaks a rule; the message names the entry and the rule."""


@dataclass(frozen=True)
class Source:
    key: str
    document: str
    section: str
    url: str = ""

    def cite(self) -> str:
        return f"{self.document}, {self.section}" if self.section else self.document


@dataclass(frozen=True)
class CudaRelease:
    """One row of NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" table."""

    version: CudaVersion
    label: str
    min_driver_linux: DriverVersion
    min_driver_windows: Optional[DriverVersion]
    source: str
    kind: str = ""  # "GA" | "update" | "RC", as NVIDIA labels the row
    note: str = ""


@dataclass(frozen=True)
class MinorVersionCompat:
    """The driver floor under which any toolkit of one CUDA major runs (minor-version compatibility)."""

    cuda_major: int
    min_driver_linux: DriverVersion
    min_driver_windows: Optional[DriverVersion]
    source: str
    max_driver_exclusive: Optional[DriverVersion] = None  # Table 2's "Max" column: drivers from here on are the next major's
    nvidia_text: str = ""  # the floor as NVIDIA words it (Table 2 prints branches, e.g. ">= 525")
    gives_up: tuple[str, ...] = ()  # what an application loses when it runs in this mode


@dataclass(frozen=True)
class ToolkitArchitectures:
    """The compute capabilities one CUDA toolkit release can compile for."""

    cuda: CudaVersion
    min_cc: ComputeCapability
    max_cc: ComputeCapability
    source: str
    note: str = ""

    def supports(self, cc: ComputeCapability) -> bool:
        return self.min_cc <= cc <= self.max_cc


@dataclass(frozen=True)
class ComputeCapabilityInfo:
    cc: ComputeCapability
    architecture: str
    examples: tuple[str, ...]
    source: str
    note: str = ""


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class WheelVariant:
    """One CUDA variant of one PyTorch release (cu121, ...), as its Linux x86_64 wheels were built."""

    name: str
    cuda: CudaVersion
    arch_list: tuple[ComputeCapability, ...]  # machine code (SASS) is shipped for these
    ptx: tuple[ComputeCapability, ...]  # PTX is shipped for these (JIT-compilable on newer GPUs)
    cudnn: Optional[str]
    source: str
    evidence: str = ""  # how the arch list is known: "binary" | "build-script" | "third-party"
    note: str = ""

    def coverage(self, gpu: ComputeCapability) -> Optional[str]:
        """``"sass"`` when the wheel carries machine code this GPU runs, ``"ptx"`` when only by JIT,
        ``None`` when it carries nothing this GPU can run."""
        if any(gpu.runs_sass_built_for(built) for built in self.arch_list):
            return "sass"
        if any(gpu.can_jit_ptx_built_for(built) for built in self.ptx):
            return "ptx"
        return None

    def arch_summary(self) -> str:
        parts = [cc.sm for cc in self.arch_list]
        parts += [f"compute_{cc.major}{cc.minor} (PTX)" for cc in self.ptx]
        return ", ".join(parts) if parts else "none"


@dataclass(frozen=True)
class PytorchRelease:
    version: str  # "2.5"
    full_version: str  # "2.5.1"
    released: Optional[str]  # date of full_version; None where no source gives it
    default_variant: Optional[str]  # the CUDA variant of the plain `torch` wheel on the public index
    variants: tuple[WheelVariant, ...]
    source: str
    note: str = ""
    # False when the table records only some of the release's variants (the others are not yet
    # verified from a source): such a release is never the default target.
    variants_complete: bool = True

    @property
    def key(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.version.split("."))

    def variant(self, name: str) -> Optional[WheelVariant]:
        for variant in self.variants:
            if variant.name == name:
                return variant
        return None


@dataclass(frozen=True)
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
            return tuple(v.name for v in release.variants)
        for version, variants in self.offers:
            if version == release.version:
                return variants
        return ()

    def reference(self, release: PytorchRelease, variant: WheelVariant) -> str:
        cudnn_major = (variant.cudnn or "").split(".")[0]
        tag = self.tag_template.format(
            torch=release.version,
            torch_full=release.full_version,
            variant=variant.name,
            cuda=str(variant.cuda.major_minor),
            cudnn_major=cudnn_major,
        )
        return f"{self.repository}:{tag}"

    @cached_property
    def _tag_pattern(self) -> "re.Pattern[str]":
        pattern = ""
        for literal, field_name, _, _ in string.Formatter().parse(self.tag_template):
            pattern += re.escape(literal)
            if field_name:
                group = _TEMPLATE_GROUPS[field_name]
                # a placeholder used twice must match the same text both times
                pattern += f"(?P={field_name})" if f"(?P<{field_name}>" in pattern else f"(?P<{field_name}>{group})"
        return re.compile(pattern + r"\Z")

    def match_tag(self, tag: str) -> Optional[dict[str, str]]:
        """The placeholder values a tag of this family was made from, or None when it is not one of its tags."""
        found = self._tag_pattern.match(tag)
        return found.groupdict() if found else None


@dataclass(frozen=True)
class ForwardCompatBranch:
    """One driver-branch column of NVIDIA's forward-compatibility matrix."""

    branch: int  # 535, 570, ...
    cuda: CudaVersion  # the CUDA release the branch was paired with
    compat_packages: tuple[CudaVersion, ...]  # cuda-compat-X-Y packages supported on it ("C" in the matrix)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Feature:
    """A GPU capability and the lowest compute capability that has it."""

    name: str
    min_cc: ComputeCapability
    source: str


@dataclass(frozen=True)
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
    raw: Any = None  # the parsed JSON, for `table --json`

    # --- sources ---------------------------------------------------------------------------

    @cached_property
    def _sources(self) -> dict[str, Source]:
        return {s.key: s for s in self.sources}

    def cite(self, key: str) -> str:
        source = self._sources.get(key)
        return source.cite() if source else key

    # --- driver <-> CUDA -------------------------------------------------------------------

    def rows_for(self, cuda: CudaVersion) -> tuple[CudaRelease, ...]:
        """Every Table 3 row (GA, updates and release candidates) of one CUDA minor."""
        return tuple(r for r in self.cuda_releases if r.version.major_minor == cuda.major_minor)

    def min_driver_full(self, cuda: CudaVersion) -> Optional[CudaRelease]:
        """The lowest driver that fully supports this CUDA minor (its GA row in Table 3; release candidates don't count)."""
        rows = self.rows_for(cuda)
        final = [r for r in rows if r.kind != "RC"] or list(rows)
        return min(final, key=lambda r: r.min_driver_linux) if final else None

    def minor_compat_floor(self, cuda_major: int) -> Optional[MinorVersionCompat]:
        for row in self.minor_version_compat:
            if row.cuda_major == cuda_major:
                return row
        return None

    def cuda_supported_by_driver(self, driver: DriverVersion) -> Optional[CudaVersion]:
        """The newest CUDA minor whose GA minimum driver this driver meets."""
        best: Optional[CudaVersion] = None
        for row in self.cuda_releases:
            if row.kind != "RC" and row.min_driver_linux <= driver:
                candidate = row.version.major_minor
                if best is None or candidate > best:
                    best = candidate
        return best

    def toolkit_architectures_for(self, cuda: CudaVersion) -> Optional[ToolkitArchitectures]:
        for row in self.toolkit_architectures:
            if row.cuda.major_minor == cuda.major_minor:
                return row
        return None

    # --- compute capabilities and products --------------------------------------------------

    def feature(self, name: str) -> Optional[Feature]:
        for feature in self.features:
            if feature.name == name:
                return feature
        return None

    def cc_info(self, cc: ComputeCapability) -> Optional[ComputeCapabilityInfo]:
        for row in self.compute_capabilities:
            if row.cc == cc:
                return row
        return None

    @cached_property
    def _gpu_names(self) -> dict[str, GpuModel]:
        names: dict[str, GpuModel] = {}
        for model in self.gpus:
            for name in (model.name,) + model.aliases + model.unverified_aliases:
                names.setdefault(normalise_gpu_name(name), model)
        return names

    def gpu_model(self, name: str) -> Optional[GpuModel]:
        """Look a product up by the short name users type or the name NVML reports."""
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
        wanted = version.strip()
        for release in self.pytorch_releases:
            if release.version == wanted or release.full_version == wanted:
                return release
        return None

    @property
    def newest_release(self) -> PytorchRelease:
        return max(self.pytorch_releases, key=lambda r: r.key)

    @property
    def default_release(self) -> PytorchRelease:
        """The newest release whose every CUDA variant the table records: the default target.

        A newer release known only by some of its wheels would make a host look unsupported
        merely because its variant is not verified yet; it can still be chosen with --torch.
        """
        complete = [r for r in self.pytorch_releases if r.variants_complete]
        return max(complete or self.pytorch_releases, key=lambda r: r.key)

    def family(self, name: str) -> Optional[ImageFamily]:
        for family in self.image_families:
            if family.name == name:
                return family
        for family in self.image_families:
            if family.repository == name:
                return family
        return None

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

    def wheel_index_url(self, variant: str) -> str:
        return self.wheel_index_template.format(variant=variant)


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
    text = name.strip().lower().replace("_", " ").replace("-", " ")
    text = re.sub(r"\s+", " ", text)
    for prefix in ("nvidia ", "tesla ", "geforce ", "quadro "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text


# --- loading and validation --------------------------------------------------------------------


def default_table_path() -> str:
    """The shipped table: inside the installed package, or at the top of a source checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (
        os.path.join(here, "data", "compat_table.json"),
        os.path.join(os.path.dirname(here), "data", "compat_table.json"),
    ):
        if os.path.isfile(candidate):
            return candidate
    return os.path.join(here, "data", "compat_table.json")


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise TableError(f"duplicate key {key!r}{_object_label(pairs)} (each key may appear once per object)")
        result[key] = value
    return result


def _object_label(pairs: list[tuple[str, Any]]) -> str:
    """Name the object a duplicate key sits in by its identifying field, when it has one."""
    for ident in ("version", "name", "cc", "cuda", "cuda_major", "branch"):
        for key, value in pairs:
            if key == ident and isinstance(value, (str, int)):
                return f" in the entry with {ident} {value!r}"
    return ""


def load_table(path: Optional[str] = None) -> CompatTable:
    """Read and validate a table file (default: $CUDADOCTOR_TABLE, else the shipped one)."""
    path = path or os.environ.get(TABLE_ENV) or default_table_path()
    from .userfiles import read_user_file

    text = read_user_file(path, "table", TableError)
    try:
        data = json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise TableError(f"table {path}: not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    except TableError as exc:
        raise TableError(f"table {path}: {exc}") from None
    try:
        return parse_table(data, path)
    except TableError as exc:
        raise TableError(f"table {path}: {exc}") from None


class _Reader:
    """Typed access to the JSON with error messages that name the entry."""

    def __init__(self, sources: set[str]):
        self.sources = sources

    @staticmethod
    def obj(value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise TableError(f"{where}: expected an object")
        return value

    @staticmethod
    def array(value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise TableError(f"{where}: expected a list")
        return value

    @staticmethod
    def text(entry: dict[str, Any], key: str, where: str, required: bool = True) -> Optional[str]:
        value = entry.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            raise TableError(f"{where}: {key!r} must be a non-empty string")
        return value

    def source(self, entry: dict[str, Any], where: str) -> str:
        key = entry.get("source")
        if not isinstance(key, str) or not key:
            raise TableError(f"{where}: missing source (every entry must name where its facts come from)")
        if key not in self.sources:
            raise TableError(f"{where}: source {key!r} is not defined under 'sources'")
        return key

    @staticmethod
    def parse(parser: Any, value: Any, where: str, key: str) -> Any:
        try:
            return parser(value)
        except (VersionError, TypeError) as exc:
            raise TableError(f"{where}: {key}: {exc}") from None


def _in_order(items: Iterable[Any], key: Any, where: str, what: str) -> None:
    previous = None
    for item in items:
        current = key(item)
        if previous is not None:
            if current == previous:
                raise TableError(f"{where}: duplicate {what} {item_label(item)}")
            if current < previous:
                raise TableError(f"{where}: {what} {item_label(item)} is out of order (keep them ascending)")
        previous = current


def _flag(entry: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise TableError(f"{where}: {key!r} must be true or false")
    return value


def item_label(item: Any) -> str:
    for attr in ("label", "version", "name", "cuda_major", "cuda", "cc", "branch"):
        if hasattr(item, attr):
            return str(getattr(item, attr))
    return repr(item)


def parse_table(data: Any, path: str = "<table>") -> CompatTable:
    """Validate parsed JSON and build the table; TableError names the first broken rule."""
    top = _Reader.obj(data, "top level")
    if top.get("schema") != TABLE_SCHEMA:
        raise TableError(f"schema {top.get('schema')!r} is not supported (expected {TABLE_SCHEMA})")
    updated = top.get("updated")
    if not isinstance(updated, str) or not _DATE_RE.match(updated):
        raise TableError("'updated' must be a date written YYYY-MM-DD")

    sources: list[Source] = []
    for key, entry in _Reader.obj(top.get("sources"), "sources").items():
        entry = _Reader.obj(entry, f"sources[{key}]")
        sources.append(
            Source(
                key=key,
                document=_Reader.text(entry, "document", f"sources[{key}]") or "",
                section=_Reader.text(entry, "section", f"sources[{key}]", required=False) or "",
                url=_Reader.text(entry, "url", f"sources[{key}]", required=False) or "",
            )
        )
    r = _Reader({s.key for s in sources})

    cuda_releases = []
    for i, entry in enumerate(_Reader.array(top.get("cuda_releases"), "cuda_releases")):
        where = f"cuda_releases[{i}]"
        entry = r.obj(entry, where)
        version = r.parse(CudaVersion.parse, entry.get("version"), where, "version")
        where = f"cuda_releases[{version}]"
        windows = entry.get("min_driver_windows")
        kind = entry.get("kind", "")
        if kind not in ("", "GA", "update", "RC"):
            raise TableError(f"{where}: kind {kind!r} must be GA, update or RC")
        cuda_releases.append(
            CudaRelease(
                version=version,
                label=r.text(entry, "label", where) or "",
                min_driver_linux=r.parse(DriverVersion.parse, entry.get("min_driver_linux"), where, "min_driver_linux"),
                min_driver_windows=None
                if windows is None
                else r.parse(DriverVersion.parse, windows, where, "min_driver_windows"),
                source=r.source(entry, where),
                kind=kind,
                note=str(entry.get("note", "")),
            )
        )
    if not cuda_releases:
        raise TableError("cuda_releases: the table lists no CUDA release")
    _in_order(cuda_releases, lambda row: row.version, "cuda_releases", "CUDA release")
    for earlier, later in zip(cuda_releases, cuda_releases[1:]):
        if later.min_driver_linux < earlier.min_driver_linux:
            raise TableError(
                f"cuda_releases[{later.version}]: minimum Linux driver {later.min_driver_linux} is lower than "
                f"that of the older CUDA {earlier.version} ({earlier.min_driver_linux})"
            )

    minor = []
    for i, entry in enumerate(_Reader.array(top.get("minor_version_compatibility"), "minor_version_compatibility")):
        where = f"minor_version_compatibility[{i}]"
        entry = r.obj(entry, where)
        major = entry.get("cuda_major")
        if not isinstance(major, int) or isinstance(major, bool):
            raise TableError(f"{where}: 'cuda_major' must be an integer")
        where = f"minor_version_compatibility[{major}]"
        windows = entry.get("min_driver_windows")
        ceiling = entry.get("max_driver_exclusive")
        gives_up = entry.get("gives_up", [])
        if not isinstance(gives_up, list) or not all(isinstance(g, str) for g in gives_up):
            raise TableError(f"{where}: 'gives_up' must be a list of strings")
        minor.append(
            MinorVersionCompat(
                cuda_major=major,
                min_driver_linux=r.parse(DriverVersion.parse, entry.get("min_driver_linux"), where, "min_driver_linux"),
                min_driver_windows=None
                if windows is None
                else r.parse(DriverVersion.parse, windows, where, "min_driver_windows"),
                source=r.source(entry, where),
                max_driver_exclusive=None
                if ceiling is None
                else r.parse(DriverVersion.parse, ceiling, where, "max_driver_exclusive"),
                nvidia_text=str(entry.get("nvidia_text", "")),
                gives_up=tuple(gives_up),
            )
        )
    _in_order(minor, lambda row: row.cuda_major, "minor_version_compatibility", "CUDA major")

    ccs = []
    for i, entry in enumerate(_Reader.array(top.get("compute_capabilities"), "compute_capabilities")):
        where = f"compute_capabilities[{i}]"
        entry = r.obj(entry, where)
        cc = r.parse(ComputeCapability.parse, entry.get("cc"), where, "cc")
        where = f"compute_capabilities[{cc}]"
        examples = entry.get("examples", [])
        if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
            raise TableError(f"{where}: 'examples' must be a list of strings")
        ccs.append(
            ComputeCapabilityInfo(
                cc=cc,
                architecture=r.text(entry, "architecture", where) or "",
                examples=tuple(examples),
                source=r.source(entry, where),
                note=str(entry.get("note", "")),
            )
        )
    _in_order(ccs, lambda row: row.cc, "compute_capabilities", "compute capability")
    known_ccs = {row.cc for row in ccs}
    cc_rows = {row.cc: row for row in ccs}

    def known_cc(value: Any, where: str, key: str) -> ComputeCapability:
        cc = r.parse(ComputeCapability.parse, value, where, key)
        if cc not in known_ccs:
            raise TableError(f"{where}: {key}: unknown compute capability {cc} (not in compute_capabilities)")
        return cc

    toolkit = []
    for i, entry in enumerate(_Reader.array(top.get("toolkit_architectures"), "toolkit_architectures")):
        where = f"toolkit_architectures[{i}]"
        entry = r.obj(entry, where)
        cuda = r.parse(CudaVersion.parse, entry.get("cuda"), where, "cuda")
        where = f"toolkit_architectures[{cuda}]"
        low = known_cc(entry.get("min_cc"), where, "min_cc")
        high = known_cc(entry.get("max_cc"), where, "max_cc")
        if high < low:
            raise TableError(f"{where}: max_cc {high} is below min_cc {low}")
        toolkit.append(
            ToolkitArchitectures(cuda=cuda, min_cc=low, max_cc=high, source=r.source(entry, where), note=str(entry.get("note", "")))
        )
    _in_order(toolkit, lambda row: row.cuda, "toolkit_architectures", "CUDA release")

    gpus = []
    seen_names: dict[str, str] = {}
    for i, entry in enumerate(_Reader.array(top.get("gpus"), "gpus")):
        where = f"gpus[{i}]"
        entry = r.obj(entry, where)
        name = r.text(entry, "name", where) or ""
        where = f"gpus[{name}]"
        aliases = entry.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
            raise TableError(f"{where}: 'aliases' must be a list of non-empty strings")
        unverified = entry.get("unverified_aliases", [])
        if not isinstance(unverified, list) or not all(isinstance(a, str) and a.strip() for a in unverified):
            raise TableError(f"{where}: 'unverified_aliases' must be a list of non-empty strings")
        alias_sources = entry.get("alias_sources", [])
        if not isinstance(alias_sources, list):
            raise TableError(f"{where}: 'alias_sources' must be a list of source keys")
        for key in alias_sources:
            r.source({"source": key}, f"{where}.alias_sources")
        brand_class = r.text(entry, "brand_class", where) or ""
        if brand_class not in BRAND_CLASSES:
            raise TableError(f"{where}: brand_class {brand_class!r} is not one of {', '.join(BRAND_CLASSES)}")
        cc = known_cc(entry.get("cc"), where, "cc")
        for alias in [name] + aliases + unverified:
            key = normalise_gpu_name(alias)
            if key in seen_names and seen_names[key] != name:
                raise TableError(f"{where}: name {alias!r} is already used by gpus[{seen_names[key]}]")
            seen_names[key] = name
        info = cc_rows[cc]
        gpus.append(
            GpuModel(
                name=name,
                aliases=tuple(aliases),
                cc=cc,
                architecture=entry.get("architecture") or info.architecture,
                brand_class=brand_class,
                source=r.source(entry, where),
                unverified_aliases=tuple(unverified),
                alias_sources=tuple(alias_sources),
            )
        )

    driver_minors = {(row.version.major, row.version.minor) for row in cuda_releases}
    toolkit_by_minor = {(row.cuda.major, row.cuda.minor): row for row in toolkit}

    def has_driver_row(cuda: CudaVersion) -> bool:
        return (cuda.major, cuda.minor) in driver_minors

    def buildable(ccs_built: tuple[ComputeCapability, ...], cuda: CudaVersion, where: str, key: str) -> None:
        """A wheel cannot carry code its toolkit cannot compile."""
        row = toolkit_by_minor.get((cuda.major, cuda.minor))
        if row is None:
            return
        for cc in ccs_built:
            if not row.supports(cc):
                raise TableError(
                    f"{where}: {key} {cc} is outside what CUDA {cuda.major_minor} can build for "
                    f"({row.min_cc} to {row.max_cc}, toolkit_architectures)"
                )

    releases = []
    for i, entry in enumerate(_Reader.array(top.get("pytorch_releases"), "pytorch_releases")):
        where = f"pytorch_releases[{i}]"
        entry = r.obj(entry, where)
        version = r.text(entry, "version", where) or ""
        if not _RELEASE_RE.match(version):
            raise TableError(f"{where}: version {version!r} must be MAJOR.MINOR, such as 2.5")
        where = f"pytorch_releases[{version}]"
        full = r.text(entry, "full_version", where) or ""
        if not _FULL_RELEASE_RE.match(full) or not full.startswith(version + "."):
            raise TableError(f"{where}: full_version {full!r} must be {version}.PATCH")
        released = entry.get("released")
        if released is not None and (not isinstance(released, str) or not _DATE_RE.match(released)):
            raise TableError(f"{where}: released {released!r} must be a date written YYYY-MM-DD (or null when unknown)")
        variants = []
        for j, ventry in enumerate(r.array(entry.get("variants"), f"{where}.variants")):
            vwhere = f"{where}.variants[{j}]"
            ventry = r.obj(ventry, vwhere)
            name = r.text(ventry, "name", vwhere) or ""
            match = _VARIANT_RE.match(name)
            if not match:
                raise TableError(f"{vwhere}: variant name {name!r} must look like cu121")
            vwhere = f"{where}.variants[{name}]"
            cuda = r.parse(CudaVersion.parse, ventry.get("cuda"), vwhere, "cuda")
            if f"cu{cuda.major}{cuda.minor}" != name:
                raise TableError(f"{vwhere}: cuda {cuda} does not match the variant name {name}")
            if not has_driver_row(cuda):
                raise TableError(f"{vwhere}: CUDA {cuda.major_minor} has no row in cuda_releases")
            arch = tuple(known_cc(v, vwhere, "arch_list") for v in r.array(ventry.get("arch_list"), f"{vwhere}.arch_list"))
            if not arch:
                raise TableError(f"{vwhere}: arch_list is empty")
            if list(arch) != sorted(set(arch)):
                raise TableError(f"{vwhere}: arch_list must be ascending without duplicates")
            ptx = tuple(known_cc(v, vwhere, "ptx") for v in r.array(ventry.get("ptx", []), f"{vwhere}.ptx"))
            if list(ptx) != sorted(set(ptx)):
                raise TableError(f"{vwhere}: ptx must be ascending without duplicates")
            buildable(arch, cuda, vwhere, "arch_list")
            buildable(ptx, cuda, vwhere, "ptx")
            evidence = ventry.get("evidence", "")
            if evidence not in _EVIDENCE:
                raise TableError(f"{vwhere}: evidence {evidence!r} must be one of {', '.join(e for e in _EVIDENCE if e)}")
            cudnn = ventry.get("cudnn")
            if cudnn is not None and (not isinstance(cudnn, str) or not re.match(r"^\d+(\.\d+)*$", cudnn)):
                raise TableError(f"{vwhere}: cudnn {cudnn!r} must be a dotted version")
            variants.append(
                WheelVariant(
                    name=name,
                    cuda=cuda,
                    arch_list=arch,
                    ptx=ptx,
                    cudnn=cudnn,
                    source=r.source(ventry, vwhere),
                    evidence=evidence,
                    note=str(ventry.get("note", "")),
                )
            )
        if not variants:
            raise TableError(f"{where}: lists no CUDA variant")
        _in_order(variants, lambda v: v.cuda, f"{where}.variants", "variant")
        default = entry.get("default_variant")
        if default is not None and default not in {v.name for v in variants}:
            raise TableError(f"{where}: default_variant {default!r} is not one of its variants")
        releases.append(
            PytorchRelease(
                version=version,
                full_version=full,
                released=released,
                default_variant=default,
                variants=tuple(variants),
                source=r.source(entry, where),
                note=str(entry.get("note", "")),
                variants_complete=_flag(entry, "variants_complete", where, default=True),
            )
        )
    if not releases:
        raise TableError("pytorch_releases: the table lists no PyTorch release")
    _in_order(releases, lambda rel: rel.key, "pytorch_releases", "release")

    families = []
    release_versions = {rel.version: rel for rel in releases}
    for i, entry in enumerate(_Reader.array(top.get("image_families"), "image_families")):
        where = f"image_families[{i}]"
        entry = r.obj(entry, where)
        families.append(parse_family(entry, where, release_versions, r.source(entry, where)))
    names = [f.name for f in families]
    if len(set(names)) != len(names):
        raise TableError("image_families: duplicate family name")

    wheel = r.obj(top.get("wheel_index"), "wheel_index")
    template = r.text(wheel, "url_template", "wheel_index") or ""
    if "{variant}" not in template:
        raise TableError("wheel_index: url_template must contain {variant}")
    r.source(wheel, "wheel_index")

    forward = None
    if top.get("forward_compatibility") is not None:
        fc = r.obj(top.get("forward_compatibility"), "forward_compatibility")
        classes = fc.get("brand_classes")
        if not isinstance(classes, list) or not all(c in BRAND_CLASSES for c in classes):
            raise TableError(f"forward_compatibility: brand_classes must be a list drawn from {', '.join(BRAND_CLASSES)}")
        package = r.text(fc, "package_template", "forward_compatibility") or ""
        if "{major}" not in package or "{minor}" not in package:
            raise TableError("forward_compatibility: package_template must contain {major} and {minor}")
        select = fc.get("select_brand_classes", [])
        if not isinstance(select, list) or not all(c in BRAND_CLASSES for c in select):
            raise TableError(
                f"forward_compatibility: select_brand_classes must be a list drawn from {', '.join(BRAND_CLASSES)}"
            )
        branches = []
        for i, bentry in enumerate(r.array(fc.get("branches", []), "forward_compatibility.branches")):
            bwhere = f"forward_compatibility.branches[{i}]"
            bentry = r.obj(bentry, bwhere)
            number = bentry.get("branch")
            if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
                raise TableError(f"{bwhere}: 'branch' must be a driver branch number such as 535")
            bwhere = f"forward_compatibility.branches[{number}]"
            packages = tuple(
                r.parse(CudaVersion.parse, p, bwhere, "compat_packages")
                for p in r.array(bentry.get("compat_packages", []), f"{bwhere}.compat_packages")
            )
            if list(packages) != sorted(set(packages)):
                raise TableError(f"{bwhere}: compat_packages must be ascending without duplicates")
            branches.append(
                ForwardCompatBranch(
                    branch=number, cuda=r.parse(CudaVersion.parse, bentry.get("cuda"), bwhere, "cuda"), compat_packages=packages
                )
            )
        _in_order(branches, lambda b: b.branch, "forward_compatibility.branches", "driver branch")
        forward = ForwardCompat(
            package_template=package,
            brand_classes=tuple(classes),
            note=r.text(fc, "note", "forward_compatibility") or "",
            source=r.source(fc, "forward_compatibility"),
            select_brand_classes=tuple(select),
            branches=tuple(branches),
        )

    features = []
    for i, entry in enumerate(r.array(top.get("features", []), "features")):
        where = f"features[{i}]"
        entry = r.obj(entry, where)
        name = r.text(entry, "name", where) or ""
        where = f"features[{name}]"
        features.append(Feature(name=name, min_cc=known_cc(entry.get("min_cc"), where, "min_cc"), source=r.source(entry, where)))

    return CompatTable(
        schema=TABLE_SCHEMA,
        updated=updated,
        path=path,
        sources=tuple(sources),
        cuda_releases=tuple(cuda_releases),
        minor_version_compat=tuple(minor),
        toolkit_architectures=tuple(toolkit),
        compute_capabilities=tuple(ccs),
        gpus=tuple(gpus),
        pytorch_releases=tuple(releases),
        image_families=tuple(families),
        wheel_index_template=template,
        forward_compat=forward,
        features=tuple(features),
        raw=data,
    )


_TEMPLATE_GROUPS = {
    "torch": r"\d+\.\d+",
    "torch_full": r"\d+\.\d+\.\d+",
    "variant": r"cu\d{2,3}",
    "cuda": r"\d+\.\d+",
    "cudnn_major": r"\d+",
}
_TEMPLATE_FIELDS = set(_TEMPLATE_GROUPS)
_EVIDENCE = ("", "binary", "build-script", "third-party")


def parse_family(
    entry: dict[str, Any], where: str, releases: dict[str, PytorchRelease], source: str
) -> ImageFamily:
    """One image family (from the table or a user's families file), checked against the releases."""
    name = _Reader.text(entry, "name", where) or ""
    where = f"image_families[{name}]" if where.startswith("image_families") else f"{where}[{name}]"
    repository = _Reader.text(entry, "repository", where) or ""
    template = _Reader.text(entry, "tag_template", where) or ""
    used = re.findall(r"{([^{}]*)}", template)
    for field_name in used:
        if field_name not in _TEMPLATE_FIELDS:
            raise TableError(
                f"{where}: tag_template uses {{{field_name}}}; allowed: "
                + ", ".join("{" + f + "}" for f in sorted(_TEMPLATE_FIELDS))
            )
    # Every (release, variant) needs a tag of its own.
    if not {"torch", "torch_full"} & set(used) or not {"variant", "cuda"} & set(used):
        raise TableError(
            f"{where}: tag_template {template!r} must name the release ({{torch}} or {{torch_full}}) "
            "and the CUDA variant ({variant} or {cuda})"
        )
    offers_raw = entry.get("offers", {})
    if not isinstance(offers_raw, dict):
        raise TableError(f"{where}: 'offers' must map a PyTorch release to its list of variants")
    offers = []
    for version, variants in offers_raw.items():
        release = releases.get(version)
        if release is None:
            raise TableError(f"{where}: offers PyTorch {version}, which the table does not list")
        if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
            raise TableError(f"{where}: offers[{version}] must be a list of variant names")
        for variant in variants:
            if release.variant(variant) is None:
                raise TableError(f"{where}: offers {variant} for PyTorch {version}, which that release does not ship")
        offers.append((version, tuple(variants)))
    return ImageFamily(
        name=name,
        repository=repository,
        tag_template=template,
        offers=tuple(offers),
        source=source,
        description=str(entry.get("description", "")),
    )
