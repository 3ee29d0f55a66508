"""Validate a parsed compatibility table and build its entries.

Every rule a table must meet is here, and a broken one raises TableError naming the entry and
the rule (unknown compute capability in an arch list, a variant with no driver row, an
unparsable version, a missing source, versions out of order, duplicate keys, ...). Pure: the
JSON comes in already parsed (see table.load_table).
"""

from __future__ import annotations

import re
import string
from typing import Any, Iterable, Optional

from .install import DEFAULT_INSTALL_STYLE, INSTALL_STYLES
from .ngc import NgcError, check_derived, parse_ngc_family, parse_ngc_release
from .table import (
    BRAND_CLASSES,
    BRANCH_DESIGNATIONS,
    CUDA_ROW_EVIDENCE,
    EVIDENCE_LEVELS,
    LAST_BRANCH_EVIDENCE,
    PLATFORM_WORDS,
    PLATFORMS,
    TABLE_SCHEMA,
    TEMPLATE_GROUPS,
    CompatTable,
    ComputeCapabilityInfo,
    CudaRelease,
    Feature,
    LastDriverBranch,
    ForwardCompat,
    ForwardCompatBranch,
    GpuModel,
    ImageFamily,
    MinorVersionCompat,
    PlatformBuild,
    PytorchRelease,
    Source,
    TableError,
    ToolkitArchitectures,
    WheelVariant,
    normalise_gpu_name,
)
from ..model.versions import ComputeCapability, CudaVersion, DriverVersion, VersionError
from ..model.text import quoted

_VARIANT_RE = re.compile(r"^cu(\d{2,3})\Z", re.ASCII)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}\Z", re.ASCII)
_RELEASE_RE = re.compile(r"^\d+\.\d+\Z", re.ASCII)
_FULL_RELEASE_RE = re.compile(r"^\d+\.\d+\.\d+\Z", re.ASCII)

def reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise TableError(f"duplicate key {quoted(key)}{_object_label(pairs)} (each key may appear once per object)")
        result[key] = value
    return result


def _object_label(pairs: list[tuple[str, Any]]) -> str:
    """Name the object a duplicate key sits in by its identifying field, when it has one."""
    for ident in ("version", "name", "cc", "cuda", "cuda_major", "branch"):
        for key, value in pairs:
            if key == ident and isinstance(value, (str, int)):
                return f" in the entry with {ident} {quoted(value)}"
    return ""


class _Reader:
    """Typed access to the JSON with error messages that name the entry."""

    def __init__(self, sources: set[str]):
        self.sources = sources
        # One table spells the same version thousands of times ("8.0" in every arch list): each
        # distinct text is parsed once per load, and its value shared (values are immutable).
        self._parsed: dict[tuple[Any, str], Any] = {}

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
            raise TableError(f"{where}: {quoted(key)} must be a non-empty string")
        return value

    def source(self, entry: dict[str, Any], where: str) -> str:
        key = entry.get("source")
        if not isinstance(key, str) or not key:
            raise TableError(f"{where}: missing source (every entry must name where its facts come from)")
        if key not in self.sources:
            raise TableError(f"{where}: source {quoted(key)} is not defined under 'sources'")
        return key

    def parse(self, parser: Any, value: Any, where: str, key: str) -> Any:
        memo = (parser, value) if isinstance(value, str) else None
        if memo is not None and memo in self._parsed:
            return self._parsed[memo]
        try:
            parsed = parser(value)
        except (VersionError, TypeError) as exc:
            raise TableError(f"{where}: {key}: {exc}") from None
        if memo is not None:
            self._parsed[memo] = parsed
        return parsed


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
        raise TableError(f"{where}: {quoted(key)} must be true or false")
    return value


def item_label(item: Any) -> str:
    for attr in ("label", "version", "name", "cuda_major", "cuda", "cc", "branch", "architecture"):
        if hasattr(item, attr):
            return str(getattr(item, attr))
    return repr(item)


def parse_table(data: Any, path: str = "<table>") -> CompatTable:
    """Validate parsed JSON and build the table; TableError names the first broken rule."""
    top = _Reader.obj(data, "top level")
    if top.get("schema") != TABLE_SCHEMA:
        raise TableError(f"schema {quoted(top.get('schema'))} is not supported (expected {TABLE_SCHEMA})")
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
            raise TableError(f"{where}: kind {quoted(kind)} must be GA, update or RC")
        evidence = entry.get("evidence", "release-notes")
        if evidence not in CUDA_ROW_EVIDENCE:
            raise TableError(f"{where}: evidence {quoted(evidence)} must be one of {', '.join(CUDA_ROW_EVIDENCE)}")
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
                evidence=evidence,
            )
        )
        if evidence != "release-notes" and not cuda_releases[-1].note:
            raise TableError(f"{where}: a row not read from Table 3 (evidence {evidence}) needs a note saying what it rests on")
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
        cc: ComputeCapability = r.parse(ComputeCapability.parse, value, where, key)
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
    gpu_names: dict[str, GpuModel] = {}  # every normalised name -> its model: the table's look-up index
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
            raise TableError(f"{where}: brand_class {quoted(brand_class)} is not one of {', '.join(BRAND_CLASSES)}")
        cc = known_cc(entry.get("cc"), where, "cc")
        claimed: dict[str, None] = {}  # the same entry may spell a name twice ("A100" and "NVIDIA A100")
        for alias in [name] + aliases + unverified:
            key = normalise_gpu_name(alias)
            if key in seen_names and key not in claimed:
                raise TableError(f"{where}: name {quoted(alias)} is already used by gpus[{seen_names[key]}]")
            seen_names[key] = name
            claimed[key] = None
        info = cc_rows[cc]
        model = GpuModel(
            name=name,
            aliases=tuple(aliases),
            cc=cc,
            architecture=r.text(entry, "architecture", where, required=False) or info.architecture,
            brand_class=brand_class,
            source=r.source(entry, where),
            unverified_aliases=tuple(unverified),
            alias_sources=tuple(alias_sources),
        )
        gpus.append(model)
        for key in claimed:
            gpu_names[key] = model

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

    def code_lists(
        entry: dict[str, Any], cuda: CudaVersion, where: str, may_be_empty: bool
    ) -> tuple[tuple[ComputeCapability, ...], tuple[ComputeCapability, ...], bool]:
        """An entry's arch_list and ptx: known, ascending, and buildable by its toolkit; and whether its
        PTX is unknown (``"ptx": null``: no binary or equal source says what PTX the wheels carry)."""
        arch = tuple(known_cc(v, where, "arch_list") for v in r.array(entry.get("arch_list"), f"{where}.arch_list"))
        if not arch and not may_be_empty:
            raise TableError(f"{where}: arch_list is empty (record a variant nothing settles with evidence \"unverified\")")
        if list(arch) != sorted(set(arch)):
            raise TableError(f"{where}: arch_list must be ascending without duplicates")
        ptx_unknown = "ptx" in entry and entry["ptx"] is None
        ptx_raw = [] if ptx_unknown else entry.get("ptx", [])
        ptx = tuple(known_cc(v, where, "ptx") for v in r.array(ptx_raw, f"{where}.ptx"))
        if list(ptx) != sorted(set(ptx)):
            raise TableError(f"{where}: ptx must be ascending without duplicates")
        buildable(arch, cuda, where, "arch_list")
        buildable(ptx, cuda, where, "ptx")
        return arch, ptx, ptx_unknown

    releases = []
    for i, entry in enumerate(_Reader.array(top.get("pytorch_releases"), "pytorch_releases")):
        where = f"pytorch_releases[{i}]"
        entry = r.obj(entry, where)
        version = r.text(entry, "version", where) or ""
        if not _RELEASE_RE.match(version):
            raise TableError(f"{where}: version {quoted(version)} must be MAJOR.MINOR, such as 2.5")
        where = f"pytorch_releases[{version}]"
        full = r.text(entry, "full_version", where) or ""
        if not _FULL_RELEASE_RE.match(full) or not full.startswith(version + "."):
            raise TableError(f"{where}: full_version {quoted(full)} must be {version}.PATCH")
        released = entry.get("released")
        if released is not None and (not isinstance(released, str) or not _DATE_RE.match(released)):
            raise TableError(f"{where}: released {quoted(released)} must be a date written YYYY-MM-DD (or null when unknown)")
        variants = []
        for j, ventry in enumerate(r.array(entry.get("variants"), f"{where}.variants")):
            vwhere = f"{where}.variants[{j}]"
            ventry = r.obj(ventry, vwhere)
            name = r.text(ventry, "name", vwhere) or ""
            match = _VARIANT_RE.match(name)
            if not match:
                raise TableError(f"{vwhere}: variant name {quoted(name)} must look like cu121")
            vwhere = f"{where}.variants[{name}]"
            cuda = r.parse(CudaVersion.parse, ventry.get("cuda"), vwhere, "cuda")
            if f"cu{cuda.major}{cuda.minor}" != name:
                raise TableError(f"{vwhere}: cuda {cuda} does not match the variant name {name}")
            evidence = ventry.get("evidence", "")
            if evidence not in _EVIDENCE:
                raise TableError(f"{vwhere}: evidence {quoted(evidence)} must be one of {', '.join(e for e in _EVIDENCE if e)}")
            # A CUDA newer than the driver rows is judged by its major's minor-version floor; only a
            # variant seen on the wheel index (inferred / unverified) may name one.
            newer_than_rows = evidence in ("inferred", "unverified") and cuda.major in {m.cuda_major for m in minor}
            if not has_driver_row(cuda) and not newer_than_rows:
                raise TableError(f"{vwhere}: CUDA {cuda.major_minor} has no row in cuda_releases")
            arch, ptx, ptx_unknown = code_lists(ventry, cuda, vwhere, may_be_empty=evidence == "unverified")
            platforms = platform_list(ventry.get("platforms", []), f"{vwhere}.platforms")
            first_patch = ventry.get("first_patch")
            if first_patch is not None and (
                not isinstance(first_patch, str) or not _FULL_RELEASE_RE.match(first_patch)
                or not first_patch.startswith(version + ".")
            ):
                raise TableError(f"{vwhere}: first_patch {quoted(first_patch)} must be {version}.PATCH")
            if first_patch is not None and _patch(first_patch) > _patch(full):
                raise TableError(f"{vwhere}: first_patch {first_patch} is newer than full_version {full}")
            builds = []
            builds_raw = r.obj(ventry.get("platform_builds", {}), f"{vwhere}.platform_builds")
            for platform, bentry in builds_raw.items():
                bwhere = f"{vwhere}.platform_builds[{platform}]"
                if platform not in PLATFORMS:
                    raise TableError(f"{bwhere}: platform must be one of {', '.join(PLATFORMS)}")
                if platforms and platform not in platforms and not (
                    "linux" in platforms and platform.startswith("linux-")
                ):
                    raise TableError(f"{bwhere}: the variant is not listed for {platform} (platforms)")
                bentry = r.obj(bentry, bwhere)
                bevidence = bentry.get("evidence", "")
                if bevidence not in _EVIDENCE or not bevidence:
                    raise TableError(f"{bwhere}: evidence {quoted(bevidence)} must be one of {', '.join(e for e in _EVIDENCE if e)}")
                barch, bptx, bptx_unknown = code_lists(bentry, cuda, bwhere, may_be_empty=bevidence == "unverified")
                builds.append(
                    PlatformBuild(
                        platform=platform, arch_list=barch, ptx=bptx, evidence=bevidence, ptx_unknown=bptx_unknown,
                        source=r.source(bentry, bwhere), note=str(bentry.get("note", "")),
                    )
                )
            inferred_from = ventry.get("inferred_from", "")
            if not isinstance(inferred_from, str) or (evidence == "inferred") != bool(inferred_from):
                raise TableError(f"{vwhere}: inferred_from must name the release and variant an inferred arch list comes from (and only then)")
            index_url, seen_on = ventry.get("index_url"), ventry.get("seen_on", "")
            if index_url is not None and (not isinstance(index_url, str) or not re.match(r"^https?://[^\s]+\Z", index_url, re.ASCII)):
                raise TableError(f"{vwhere}: index_url must be an http(s) URL")
            if not isinstance(seen_on, str):
                raise TableError(f"{vwhere}: seen_on must be a string")
            cudnn = ventry.get("cudnn")
            if cudnn is not None and (not isinstance(cudnn, str) or not re.match(r"^\d+(\.\d+)*\Z", cudnn, re.ASCII)):
                raise TableError(f"{vwhere}: cudnn {quoted(cudnn)} must be a dotted version")
            variants.append(
                WheelVariant(
                    name=name,
                    cuda=cuda,
                    arch_list=arch,
                    ptx=ptx,
                    ptx_unknown=ptx_unknown,
                    cudnn=cudnn,
                    source=r.source(ventry, vwhere),
                    evidence=evidence,
                    note=str(ventry.get("note", "")),
                    platforms=platforms,
                    first_patch=first_patch,
                    platform_builds=tuple(builds),
                    inferred_from=inferred_from,
                    index_url=index_url,
                    seen_on=seen_on,
                )
            )
        if not variants:
            raise TableError(f"{where}: lists no CUDA variant")
        _in_order(variants, lambda v: v.cuda, f"{where}.variants", "variant")
        default = entry.get("default_variant")
        if default is not None and (not isinstance(default, str) or default not in {v.name for v in variants}):
            raise TableError(f"{where}: default_variant {quoted(default)} is not one of its variants")
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
                default_wheel_platforms=platform_list(
                    entry.get("default_wheel_platforms", []), f"{where}.default_wheel_platforms"
                ),
                install_style=_install_style(entry, where),
            )
        )
    if not releases:
        raise TableError("pytorch_releases: the table lists no PyTorch release")
    _in_order(releases, lambda rel: rel.key, "pytorch_releases", "release")

    families = []
    release_versions = {rel.version: rel for rel in releases}
    ngc_families = []
    for i, entry in enumerate(_Reader.array(top.get("image_families"), "image_families")):
        where = f"image_families[{i}]"
        entry = r.obj(entry, where)
        if entry.get("kind", "wheel") == "ngc":  # a tag per monthly release, not per (release, variant)
            ngc_families.append(_ngc(parse_ngc_family, entry, r.sources))
            continue
        if entry.get("kind", "wheel") != "wheel":
            raise TableError(f"{where}: kind {entry.get('kind')!r} must be \"wheel\" (the default) or \"ngc\"")
        entry = {k: v for k, v in entry.items() if k != "kind"}
        families.append(parse_family(entry, where, release_versions, r.source(entry, where)))
    names = [f.name for f in families] + [f.name for f in ngc_families]
    if len(set(names)) != len(names):
        raise TableError("image_families: duplicate family name")
    if not families:
        raise TableError("image_families: the table lists no image family (the first one is the default)")

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
            designation = bentry.get("designation")
            if designation is not None and designation not in BRANCH_DESIGNATIONS:
                raise TableError(f"{bwhere}: designation {quoted(designation)} must be one of {', '.join(BRANCH_DESIGNATIONS)} (or null)")
            end_of_life = bentry.get("end_of_life")
            if end_of_life is not None and (not isinstance(end_of_life, str) or not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", end_of_life)):
                raise TableError(f"{bwhere}: end_of_life must be a month YYYY-MM (as the driver pages print it) or null")
            # A branch's lifecycle decides whether it is offered: where it is stated, it names its source.
            bsource = r.source(bentry, bwhere) if (designation is not None or end_of_life is not None or "source" in bentry) else ""
            if end_of_life is not None and designation is None:
                raise TableError(f"{bwhere}: an end of life needs the branch's designation (LTSB, PB or NFB)")
            branches.append(
                ForwardCompatBranch(
                    branch=number, cuda=r.parse(CudaVersion.parse, bentry.get("cuda"), bwhere, "cuda"), compat_packages=packages,
                    designation=designation, end_of_life=end_of_life, source=bsource,
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

    ngc_releases = [_ngc(parse_ngc_release, entry, r.sources) for entry in r.array(top.get("ngc_pytorch_releases", []), "ngc_pytorch_releases")]
    _in_order(ngc_releases, lambda rel: rel.key, "ngc_pytorch_releases", "release")
    if ngc_releases and not ngc_families:
        raise TableError("ngc_pytorch_releases: no image family of kind \"ngc\" offers these releases")
    exact = {row.version: row for row in cuda_releases}  # Table 3's row for the container's own CUDA release
    for ngc in ngc_releases:
        if ngc.cuda is None:
            continue
        row = exact.get(ngc.cuda)
        covering = (
            tuple(b.branch for b in forward.branches if ngc.cuda.major_minor in b.compat_packages) if forward else None
        )
        _ngc(check_derived, ngc, row.min_driver_linux if row else None, covering)

    features = []
    for i, entry in enumerate(r.array(top.get("features", []), "features")):
        where = f"features[{i}]"
        entry = r.obj(entry, where)
        name = r.text(entry, "name", where) or ""
        where = f"features[{name}]"
        features.append(Feature(name=name, min_cc=known_cc(entry.get("min_cc"), where, "min_cc"), source=r.source(entry, where)))

    last_branches = _last_branches(r, top.get("last_driver_branches", []), known_cc, cc_rows)

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
        last_branches=last_branches,
        raw=data,
        gpu_names=gpu_names,
        ngc_releases=tuple(ngc_releases),
        ngc_families=tuple(ngc_families),
    )


def _last_branches(
    r: _Reader, value: Any, known_cc: Any, cc_rows: dict[ComputeCapability, ComputeCapabilityInfo]
) -> tuple[LastDriverBranch, ...]:
    """The last driver branch per architecture: known compute capabilities of that architecture, each
    in one entry only, a branch number (or null: still supported), an evidence level and a source."""
    rows: list[LastDriverBranch] = []
    seen: dict[ComputeCapability, str] = {}
    for i, entry in enumerate(r.array(value, "last_driver_branches")):
        where = f"last_driver_branches[{i}]"
        entry = r.obj(entry, where)
        architecture = r.text(entry, "architecture", where) or ""
        where = f"last_driver_branches[{architecture}]"
        ccs = tuple(known_cc(c, where, "cc") for c in r.array(entry.get("cc"), f"{where}.cc"))
        if not ccs or list(ccs) != sorted(set(ccs)):
            raise TableError(f"{where}: cc must be a non-empty ascending list without duplicates")
        for cc in ccs:
            if cc_rows[cc].architecture != architecture:
                raise TableError(f"{where}: cc {cc} is {cc_rows[cc].architecture} in compute_capabilities, not {architecture}")
            if cc in seen:
                raise TableError(f"{where}: cc {cc} is already in the {seen[cc]} entry")
            seen[cc] = architecture
        branch = entry.get("last_branch")
        if branch is not None and (not isinstance(branch, int) or isinstance(branch, bool) or branch <= 0):
            raise TableError(f"{where}: 'last_branch' must be a driver branch number such as 470 (or null: still supported)")
        evidence = entry.get("evidence")
        if evidence not in LAST_BRANCH_EVIDENCE:
            raise TableError(f"{where}: evidence {quoted(evidence)} must be one of {', '.join(LAST_BRANCH_EVIDENCE)}")
        rows.append(LastDriverBranch(
            architecture=architecture, ccs=ccs, last_branch=branch, evidence=evidence, source=r.source(entry, where),
            note=str(entry.get("note", "")),
        ))
    _in_order(rows, lambda row: row.ccs[0], "last_driver_branches", "compute capability")
    return tuple(rows)


def _ngc(parse: Any, *args: Any) -> Any:
    """Run one of compat.ngc's rules, its NgcError raised as the table's TableError."""
    try:
        return parse(*args)
    except NgcError as exc:
        raise TableError(str(exc)) from None


_TEMPLATE_FIELDS = set(TEMPLATE_GROUPS)
_EVIDENCE = ("",) + EVIDENCE_LEVELS


def _patch(full_version: str) -> int:
    return int(full_version.rsplit(".", 1)[1])


def platform_list(value: Any, where: str) -> tuple[str, ...]:
    """A list of platform names (PLATFORM_WORDS), each once."""
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise TableError(f"{where}: expected a list of platform names")
    for platform in value:
        if platform not in PLATFORM_WORDS:
            raise TableError(f"{where}: unknown platform {platform!r} (one of {', '.join(PLATFORM_WORDS)})")
    if len(set(value)) != len(value):
        raise TableError(f"{where}: a platform is listed twice")
    return tuple(value)


def _template_fields(template: str, where: str) -> list[str]:
    """The {field} names a tag template uses, read as str.format reads it; a stray brace, a
    conversion or format spec, or a brace left in the text (tags have none) is refused here,
    before a check would format it."""
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError:
        raise TableError(f"{where}: tag_template {quoted(template)} has an unmatched {{ or }}") from None
    used = []
    for literal, field_name, spec, conversion in parts:
        if "{" in literal or "}" in literal:
            raise TableError(f"{where}: tag_template {quoted(template)} has a literal brace (image tags have none)")
        if field_name is None:
            continue
        if spec or conversion:
            raise TableError(f"{where}: tag_template {quoted(template)}: write fields plainly, as {{torch}}")
        used.append(field_name)
    return used


def _description(entry: dict[str, Any], where: str) -> str:
    """A family's optional description: a string (a number or a list there is a mistake, and a
    5000-digit integer cannot even be shown)."""
    value = entry.get("description", "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TableError(f"{where}: 'description' must be a string")
    return value


def parse_family(
    entry: dict[str, Any], where: str, releases: dict[str, PytorchRelease], source: str
) -> ImageFamily:
    """One image family (from the table or a user's families file), checked against the releases."""
    name = _Reader.text(entry, "name", where) or ""
    where = f"image_families[{name}]" if where.startswith("image_families") else f"{where}[{name}]"
    repository = _Reader.text(entry, "repository", where) or ""
    template = _Reader.text(entry, "tag_template", where) or ""
    used = _template_fields(template, where)
    for field_name in used:
        if field_name not in _TEMPLATE_FIELDS:
            raise TableError(
                f"{where}: tag_template uses {{{field_name}}}; allowed: "
                + ", ".join("{" + f + "}" for f in sorted(_TEMPLATE_FIELDS))
            )
    # Every (release, variant) needs a tag of its own.
    if not {"torch", "torch_full"} & set(used) or not {"variant", "cuda"} & set(used):
        raise TableError(
            f"{where}: tag_template {quoted(template)} must name the release ({{torch}} or {{torch_full}}) "
            "and the CUDA variant ({variant} or {cuda})"
        )
    offers_raw = entry.get("offers")
    if offers_raw is None:  # absent, or null as `table --json` writes it: every variant of every release
        offers_raw = {}
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
        description=_description(entry, where),
    )


def _install_style(entry: dict[str, Any], where: str) -> str:
    """A release's ``install_style``: how PyTorch's pages install its CUDA wheels (default index-url)."""
    style = entry.get("install_style", DEFAULT_INSTALL_STYLE)
    if style not in INSTALL_STYLES:
        raise TableError(f"{where}: install_style {quoted(style)} must be one of {', '.join(INSTALL_STYLES)}")
    return str(style)
