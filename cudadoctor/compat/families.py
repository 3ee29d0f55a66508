"""Image families a user defines in a TOML file (--families FILE or $CUDADOCTOR_FAMILIES). Pure: the
loader reads the file (cudadoctor.app.loader.load_families).

A families file adds repositories whose tags follow a template, checked against the table like the
shipped families::

    [[family]]
    name = "acme/pytorch"
    repository = "registry.example.com/acme/pytorch"
    tag_template = "{torch_full}-{variant}"     # {torch} {torch_full} {variant} {cuda} {cudnn_major}
    description = "ACME's PyTorch images"       # optional

    [family.offers]                             # optional: without it, every variant of every release
    "2.9" = ["cu126", "cu128"]
"""

from __future__ import annotations

from typing import Any

from ..model.record import replace
from .toml_text import load_toml
from .table import CompatTable, Source, TableError
from .validate import parse_family
from ..model.text import quoted, shown_path, unquoted

class FamiliesError(ValueError):
    """The families file cannot be used; the message names the file, the family and the rule."""


def parse_families(text: str, table: CompatTable, path: str) -> CompatTable:
    """The table with the families of a families file's text added after its own; raises FamiliesError."""
    try:
        return add_families(load_toml(text, "families file", FamiliesError), table, path)
    except (FamiliesError, TableError) as exc:
        raise FamiliesError(f"families file {shown_path(path)}: {exc}") from None


def add_families(data: dict[str, Any], table: CompatTable, path: str) -> CompatTable:
    unknown = sorted(set(data) - {"family"})
    if unknown:
        raise FamiliesError(f"unknown top-level key {quoted(unknown[0])} (expected [[family]] tables)")
    entries = data.get("family")
    if not isinstance(entries, list) or not entries:
        raise FamiliesError("defines no family (add a [[family]] table with name, repository and tag_template)")
    source = Source(key=f"families-file:{path}", document=f"families file {path}", section="user-defined image families")
    releases = {release.version: release for release in table.pytorch_releases}
    taken = {family.name for family in table.image_families}
    families = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise FamiliesError(f"family #{i + 1}: expected a table")
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            raise FamiliesError(f"family #{i + 1}: 'name' must be a non-empty string")
        extra = sorted(set(entry) - {"name", "repository", "tag_template", "description", "offers"})
        if extra:
            raise FamiliesError(f"family[{unquoted(name)}]: unknown key {quoted(extra[0])}")
        family = parse_family(entry, "family", releases, source.key)
        if family.name in taken:
            raise FamiliesError(f"family[{unquoted(name)}]: the name is already used by another family")
        taken.add(family.name)
        families.append(family)
    return replace(
        table, image_families=table.image_families + tuple(families), sources=table.sources + (source,)
    )
