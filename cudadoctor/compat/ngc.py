"""NVIDIA's NGC PyTorch containers (tags ``YY.MM-py3`` of NVIDIA's NGC PyTorch repository): one image per monthly
release, each with its own CUDA, its own PyTorch build and its own driver rules. Pure.

These do not follow the wheel families' pattern (one tag per PyTorch release and CUDA variant):
a tag names a month, and the month's facts come from NVIDIA's release notes. Each fact carries
its evidence level, since many months are not settled by any source this table has read:

- ``release-notes``: printed in NVIDIA's PyTorch release notes for that month;
- ``secondary``: not printed on the month's PyTorch release-notes page as this table read it,
  but settled by NVIDIA's own material for the same month: its compatibility matrix of the Triton
  containers (a container built on that month's PyTorch image, naming its CUDA, agreeing with the
  same month's Triton container), or NVIDIA's release notes as quoted, agreeing with such a row.
  It settles a month (labelled as such), after ``release-notes``;
- ``derived``: computed from settled facts of this table (the minimum driver from the CUDA
  release notes' Table 3 row for the container's CUDA; the forward-compatibility branches from
  NVIDIA's forward-compatibility matrix), and checked against them when the table loads;
- ``unverified``: seen only where NVIDIA does not publish it (the image's own environment as
  quoted in a public report, a related NVIDIA build), or not seen at all (the value is null).
"""

from __future__ import annotations

import re

from ..model.record import record
from ..model.versions import CudaVersion, DriverVersion, VersionError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional

RELEASE_NOTES = "release-notes"
SECONDARY = "secondary"  # NVIDIA's own material for the same month other than the PyTorch release-notes page
DERIVED = "derived"
UNVERIFIED = "unverified"
EVIDENCE_LEVELS = (RELEASE_NOTES, SECONDARY, DERIVED, UNVERIFIED)
SETTLING = (RELEASE_NOTES, SECONDARY)  # the levels that settle a month's CUDA
FACT_FIELDS = ("cuda", "pytorch", "min_driver", "forward_compat_branches", "arch_list")

_RELEASE_RE = re.compile(r"^(\d{2})\.(0[1-9]|1[0-2])$")
# PyTorch as NGC prints it: 2.4.0a0+07cecf4, 2.10.0a0+b4e4ee81d3, 2.0.0
_NGC_TORCH_RE = re.compile(r"^(\d+)\.(\d+)\.\d+(?:[a-z]+\d+)?(?:\+[0-9a-f]+)?$")


class NgcError(ValueError):
    """An NGC entry breaks a rule; the message names the release and the rule."""


@record
class NgcRelease:
    """One monthly NGC PyTorch container release and what is known of it."""

    release: str  # "24.05"
    cuda: Optional[CudaVersion]  # the container's CUDA, "13.1.0"
    pytorch: Optional[str]  # as the release notes print it: "2.10.0a0+b4e4ee81d3"
    min_driver: Optional[DriverVersion]  # Linux driver for full support of the container's CUDA
    forward_compat_branches: Optional[tuple[int, ...]]  # older data-center branches via cuda-compat
    arch_list: Optional[tuple[str, ...]]  # TORCH_CUDA_ARCH_LIST words: ("8.0", "9.0+PTX")
    evidence: tuple[tuple[str, str], ...]  # (fact, level) for every fact in FACT_FIELDS
    source: str
    sources: tuple[tuple[str, str], ...] = ()  # (fact, source key) where a fact has its own source
    note: str = ""

    @property
    def key(self) -> tuple[int, int]:
        year, month = self.release.split(".")
        return int(year), int(month)

    def evidence_of(self, fact: str) -> str:
        for name, level in self.evidence:
            if name == fact:
                return level
        return UNVERIFIED

    def source_of(self, fact: str) -> str:
        for name, key in self.sources:
            if name == fact:
                return key
        return self.source

    @property
    def torch_minor(self) -> Optional[str]:
        """The PyTorch minor release the build belongs to: "2.4" for 2.4.0a0+07cecf4."""
        found = _NGC_TORCH_RE.match(self.pytorch or "")
        return f"{found.group(1)}.{found.group(2)}" if found else None

    @property
    def settled(self) -> bool:
        """Whether NVIDIA's own material settles the container's CUDA: its PyTorch release notes, or
        (``secondary``) its other material for the same month."""
        return self.cuda is not None and self.evidence_of("cuda") in SETTLING

    @property
    def evidence_label(self) -> str:
        """What settles the month's CUDA: release-notes, secondary or unverified."""
        level = self.evidence_of("cuda")
        return level if self.cuda is not None and level in SETTLING else UNVERIFIED


@record
class NgcFamily:
    """The NGC PyTorch repository: a tag per monthly release, ``{release}-py3``."""

    name: str
    repository: str
    tag_template: str  # must contain {release}
    source: str
    description: str = ""

    def reference(self, release: NgcRelease) -> str:
        return f"{self.repository}:{self.tag_template.format(release=release.release)}"

    def release_in_tag(self, tag: str) -> Optional[str]:
        """The YY.MM release a tag of this family names ("24.05-py3" -> "24.05"), or None."""
        prefix, _, suffix = self.tag_template.partition("{release}")
        if not tag.startswith(prefix) or not tag.endswith(suffix) or len(tag) <= len(prefix) + len(suffix):
            return None
        middle = tag[len(prefix): len(tag) - len(suffix)]
        return middle if _RELEASE_RE.match(middle) else None


def arch_words(text: str) -> tuple[str, ...]:
    """TORCH_CUDA_ARCH_LIST's words ("5.2 6.0;9.0+PTX" -> ("5.2", "6.0", "9.0+PTX")); raises NgcError."""
    words = tuple(w for w in re.split(r"[\s;]+", text.strip()) if w)
    for word in words:
        if not re.match(r"^\d+\.\d+[a-z]?(\+PTX)?$", word):
            raise NgcError(f"arch list word {word!r} is not of the form 8.0, 9.0a or 9.0+PTX")
    return words


def _kind(value: object) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else "an object"
    )


def parse_ngc_release(entry: dict[str, Any], sources: set[str]) -> NgcRelease:
    """One ``ngc_pytorch_releases`` entry, with the rules each fact and its evidence must meet."""
    if not isinstance(entry, dict):
        raise NgcError(f"ngc_pytorch_releases: an entry is {_kind(entry)}; each must be an object")
    release = entry.get("release")
    if not isinstance(release, str) or not _RELEASE_RE.match(release):
        raise NgcError(f"release {release!r} must be written YY.MM, such as 24.05")
    where = f"ngc_pytorch_releases[{release}]"
    unknown = sorted(set(entry) - {"release", "source", "sources", "evidence", "note", *FACT_FIELDS})
    if unknown:
        raise NgcError(f"{where}: unknown key {unknown[0]!r}")
    source = entry.get("source")
    if not isinstance(source, str) or source not in sources:
        raise NgcError(f"{where}: source {source!r} is not defined under 'sources'")
    own_sources = entry.get("sources", {})
    if not isinstance(own_sources, dict) or not all(
        k in FACT_FIELDS and isinstance(v, str) and v in sources for k, v in own_sources.items()
    ):
        raise NgcError(f"{where}: 'sources' must map facts ({', '.join(FACT_FIELDS)}) to keys defined under 'sources'")
    evidence = entry.get("evidence")
    if not isinstance(evidence, dict) or set(evidence) != set(FACT_FIELDS):
        raise NgcError(f"{where}: 'evidence' must give a level for each of {', '.join(FACT_FIELDS)}")
    for fact, level in evidence.items():
        if not isinstance(level, str) or level not in EVIDENCE_LEVELS:
            raise NgcError(f"{where}: evidence for {fact} is {level!r}; expected one of {', '.join(EVIDENCE_LEVELS)}")
        if entry.get(fact) is None and level != UNVERIFIED:
            raise NgcError(f"{where}: {fact} is null, so its evidence must be {UNVERIFIED!r}")
    for fact in ("cuda", "min_driver"):  # written as the release notes print them, never as JSON numbers (5 is not "5.0")
        if entry.get(fact) is not None and not isinstance(entry[fact], str):
            raise NgcError(f"{where}: {fact} {entry[fact]!r:.40} must be a string such as \"12.4.1\" or \"550.54.15\"")
    try:
        cuda = CudaVersion.parse(entry["cuda"]) if entry.get("cuda") is not None else None
        min_driver = DriverVersion.parse(entry["min_driver"]) if entry.get("min_driver") is not None else None
    except (VersionError, TypeError) as exc:
        raise NgcError(f"{where}: {exc}") from None
    pytorch = entry.get("pytorch")
    if pytorch is not None and (not isinstance(pytorch, str) or not _NGC_TORCH_RE.match(pytorch)):
        raise NgcError(f"{where}: pytorch {pytorch!r} is not a version as the release notes print it (2.4.0a0+07cecf4)")
    branches = entry.get("forward_compat_branches")
    if branches is not None and (
        not isinstance(branches, list)
        or not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in branches)
        or branches != sorted(set(branches))
    ):
        raise NgcError(f"{where}: forward_compat_branches must be ascending driver branch numbers such as [535, 570]")
    arch = entry.get("arch_list")
    if arch is not None and not isinstance(arch, str):
        raise NgcError(f"{where}: arch_list must be the TORCH_CUDA_ARCH_LIST text, such as \"8.0 8.6 9.0+PTX\"")
    try:
        arch_list = arch_words(arch) if arch is not None else None
    except NgcError as exc:
        raise NgcError(f"{where}: {exc}") from None
    for fact in ("min_driver", "forward_compat_branches"):
        if evidence[fact] == DERIVED and evidence["cuda"] not in SETTLING:
            raise NgcError(f"{where}: {fact} can be derived only from a settled CUDA (release-notes or secondary); mark it unverified")
    if any(level == SECONDARY for level in evidence.values()) and not str(entry.get("note", "")).strip():
        raise NgcError(f"{where}: a secondary fact needs a note naming the NVIDIA material that settles it")
    note = entry.get("note", "")
    if not isinstance(note, str):
        raise NgcError(f"{where}: 'note' must be a string")
    if any(level == UNVERIFIED for fact, level in evidence.items() if entry.get(fact) is not None) and not note.strip():
        raise NgcError(f"{where}: an unverified value needs a note saying where it was seen")
    return NgcRelease(
        release=release,
        cuda=cuda,
        pytorch=pytorch,
        min_driver=min_driver,
        forward_compat_branches=tuple(branches) if branches is not None else None,
        arch_list=arch_list,
        evidence=tuple((f, evidence[f]) for f in FACT_FIELDS),
        source=source,
        sources=tuple(sorted(own_sources.items())),
        note=note,
    )


def _description(entry: dict[str, Any], where: str) -> str:
    value = entry.get("description", "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise NgcError(f"{where}: 'description' must be a string")
    return value


def parse_ngc_family(entry: dict[str, Any], sources: set[str]) -> NgcFamily:
    """An ``image_families`` entry of kind "ngc"."""
    name = entry.get("name")
    where = f"image_families[{name}]"
    unknown = sorted(set(entry) - {"name", "kind", "repository", "tag_template", "description", "source"})
    if unknown:
        raise NgcError(f"{where}: unknown key {unknown[0]!r}")
    for key in ("name", "repository", "tag_template"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise NgcError(f"{where}: {key!r} must be a non-empty string")
    template = entry["tag_template"]
    if re.findall(r"{([^{}]*)}", template) != ["release"]:
        raise NgcError(f"{where}: an ngc family's tag_template must contain {{release}} once and nothing else in braces")
    source = entry.get("source")
    if not isinstance(source, str) or source not in sources:
        raise NgcError(f"{where}: source {source!r} is not defined under 'sources'")
    return NgcFamily(
        name=entry["name"],
        repository=entry["repository"],
        tag_template=template,
        source=source,
        description=_description(entry, where),
    )


def check_derived(
    release: NgcRelease,
    table_min_driver: Optional[DriverVersion],
    compat_branches: Optional[tuple[int, ...]],
) -> None:
    """A derived fact must equal what the table's own rows give: the Table 3 minimum driver for
    the container's CUDA, and the forward-compatibility branches whose compat packages cover it.

    A value the release notes print is kept as printed even where the table's rows give another
    one (older pages print a branch, "550 or later", and name end-of-life branches such as R470);
    the entry's note must then say so, so that neither value is hidden."""
    where = f"ngc_pytorch_releases[{release.release}]"
    _printed_against_rows(release, table_min_driver, compat_branches, where)
    if release.min_driver is not None and release.evidence_of("min_driver") == DERIVED:
        if table_min_driver is None:
            raise NgcError(f"{where}: min_driver is derived, but cuda_releases has no row for CUDA {release.cuda}")
        if release.min_driver != table_min_driver:
            raise NgcError(
                f"{where}: min_driver {release.min_driver} differs from cuda_releases' {table_min_driver} for CUDA {release.cuda}"
            )
    branches = release.forward_compat_branches
    if branches is not None and release.evidence_of("forward_compat_branches") == DERIVED:
        if compat_branches is None:
            raise NgcError(f"{where}: forward_compat_branches is derived, but the table has no forward_compatibility matrix")
        if branches != compat_branches:
            raise NgcError(
                f"{where}: forward_compat_branches {list(branches)} differ from the matrix's {list(compat_branches)} "
                f"for CUDA {release.cuda.major_minor if release.cuda else '?'}"
            )


def _printed_against_rows(
    release: NgcRelease,
    table_min_driver: Optional[DriverVersion],
    compat_branches: Optional[tuple[int, ...]],
    where: str,
) -> None:
    """A printed driver fact that disagrees with the table's own rows needs a note naming the rows' value."""
    printed = release.min_driver
    if printed is not None and table_min_driver is not None and release.evidence_of("min_driver") == RELEASE_NOTES:
        # "550 or later" is recorded as the branch 550: it agrees with a Table 3 row on that branch.
        agrees = printed == table_min_driver or (len(printed.numbers) == 1 and printed.branch == table_min_driver.branch)
        if not agrees and str(table_min_driver) not in release.note:
            raise NgcError(
                f"{where}: min_driver {printed} as the release notes print it differs from cuda_releases' "
                f"{table_min_driver} for CUDA {release.cuda}; keep it, and name {table_min_driver} in the note"
            )
    branches = release.forward_compat_branches
    if (
        branches is not None
        and compat_branches is not None
        and release.evidence_of("forward_compat_branches") == RELEASE_NOTES
        and branches != compat_branches
        and not release.note.strip()
    ):
        raise NgcError(
            f"{where}: forward_compat_branches {list(branches)} as the release notes print them differ from the "
            f"matrix's {list(compat_branches)}; keep them, and say so in the note"
        )
