"""A team's defaults, from a TOML config file (``--config FILE``, else
``$XDG_CONFIG_HOME/cudadoctor/config.toml``, else ``~/.config/cudadoctor/config.toml``). Pure:
the loader reads the file (cudadoctor.app.loader.load_config); applying it to a table is
:func:`apply_config`. Every key is optional::

    family = "pytorch-cuda"                                  # the default image family (shipped: pytorch/pytorch)
    repository = "registry.example.com/ml/pytorch-cuda"      # where that family's images are pulled from
                                                             # (without `family`: the pytorch-cuda family's)
    table = "/srv/cudadoctor/compat_table.json"              # instead of the shipped table
    families = ["/srv/cudadoctor/families.toml"]             # families files to add (a string or a list)

Command-line options and the ``$CUDADOCTOR_TABLE`` / ``$CUDADOCTOR_FAMILIES`` variables win over
the file. Relative paths are read relative to the config file's directory.
"""

from __future__ import annotations

from typing import Any, Optional

from ..model.record import record, replace
from ..model.text import quoted, shown_path
from .toml_text import load_toml
from .table import CONVENTION_FAMILY, CompatTable

KEYS = ("family", "repository", "table", "families")


class ConfigError(ValueError):
    """The config file cannot be used; the message names the file and the key."""


@record
class Config:
    path: Optional[str] = None  # the file read (None: there was none)
    family: Optional[str] = None
    repository: Optional[str] = None
    table: Optional[str] = None
    families: tuple[str, ...] = ()


def _string(data: dict[str, Any], key: str) -> Optional[str]:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{key!r} must be a non-empty string")
    return value.strip()


def parse_config(text: str, path: str, resolve: Any = None) -> Config:
    """The config in a file's text; raises ConfigError("config <path>: ...").
    ``resolve(relative) -> path`` anchors relative file names (the loader passes the file's directory)."""
    try:
        data = load_toml(text, "config file", ConfigError)
        unknown = sorted(set(data) - set(KEYS))
        if unknown:
            raise ConfigError(f"unknown key {quoted(unknown[0])} (known: {', '.join(KEYS)})")
        families_raw = data.get("families", [])
        if isinstance(families_raw, str):
            families_raw = [families_raw]
        if not isinstance(families_raw, list) or not all(isinstance(f, str) and f.strip() for f in families_raw):
            raise ConfigError("'families' must be a file name or a list of file names")
        table = _string(data, "table")
        families = tuple(f.strip() for f in families_raw)
        if resolve is not None:
            table = resolve(table) if table else None
            families = tuple(resolve(f) for f in families)
        repository = _string(data, "repository")
        if repository is not None and (":" in repository.rsplit("/", 1)[-1] or "@" in repository or " " in repository):
            raise ConfigError(f"'repository' {quoted(repository)} must be a repository without a tag, e.g. registry.example.com/ml/pytorch-cuda")
        return Config(path=path, family=_string(data, "family"), repository=repository, table=table, families=families)
    except ConfigError as exc:
        raise ConfigError(f"config {path}: {exc}") from None


def apply_config(table: CompatTable, config: Config) -> CompatTable:
    """The table with the config's default family first (the default) and its repository set."""
    if config.family is None and config.repository is None:
        return table
    # A repository without a family is where a team builds or mirrors the convention family's tags
    # (pytorch-cuda:v2.9-cu128, the default before PyTorch's own images were): configs written
    # then keep naming the same images. A mirror of another family names it with `family`.
    name = config.family or (CONVENTION_FAMILY if table.family(CONVENTION_FAMILY) is not None else table.image_families[0].name)
    ngc = table.ngc_family(name) if config.family is not None else None
    if ngc is not None:  # an NGC family as the default: --family ngc-pytorch unless --family says otherwise
        if config.repository is not None:
            ngc = replace(ngc, repository=config.repository)
        rest = tuple(f for f in table.ngc_families if f.name != ngc.name)
        return replace(table, ngc_families=(ngc,) + rest, default_ngc=ngc.name)
    family = table.family(name)
    if family is None:
        known = ", ".join([f.name for f in table.image_families] + [f.name for f in table.ngc_families])
        raise ConfigError(f"config {shown_path(config.path or '')}: unknown family {quoted(name)}: known families are {known}")
    if config.repository is not None:
        family = replace(family, repository=config.repository)
    others = tuple(f for f in table.image_families if f.name != name)
    return replace(table, image_families=(family,) + others)
