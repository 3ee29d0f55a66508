"""From the command line to the core's inputs: the table, the host facts and the request, with
every problem a one-line usage error (exit 2)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Optional, Sequence

import click

from .errors import InputError

if TYPE_CHECKING:
    from ..compat.table import CompatTable
    from ..doctor.request import Request, UserValues
    from ..model.facts import HostFacts
    from ..probe.nvml import NvmlProbe


def load_table_or_fail(path: Optional[str], families: Optional[str] = None, config: Optional[str] = None) -> "CompatTable":
    """The table (--table / $CUDADOCTOR_TABLE / the config's / shipped), plus the families of
    --families / $CUDADOCTOR_FAMILIES / the config's, with the config's default family and
    repository applied (config: --config FILE, else the user's config.toml when there is one)."""
    import os

    from ..compat.table import TableError
    from ..app.loader import FAMILIES_ENV, TABLE_ENV, families_path, load_config, load_families, load_table

    try:
        settings = load_config(config)
    except ValueError as exc:  # ConfigError (its module loads only when there is a config file)
        raise InputError(str(exc)) from None
    if settings is not None and not path and not os.environ.get(TABLE_ENV) and settings.table:
        path = settings.table
    try:
        table = load_table(path)
    except TableError as exc:
        raise InputError(str(exc)) from None
    chosen = families_path(families)
    extra = [chosen] if chosen else ([] if os.environ.get(FAMILIES_ENV) or settings is None else list(settings.families))
    if extra:
        from ..compat.families import FamiliesError

        for name in extra:
            try:
                table = load_families(name, table)
            except FamiliesError as exc:
                raise InputError(str(exc)) from None
    if settings is None:
        return table
    from ..compat.config import ConfigError, apply_config

    try:
        return apply_config(table, settings)
    except ConfigError as exc:
        raise InputError(str(exc)) from None


def user_values_or_fail(
    image: Optional[str], variant: Optional[str], requirements: Sequence[str], min_memory: Optional[str],
    run: Optional[str] = None,
) -> "UserValues":
    from ..doctor.request import RequestError, parse_user_values

    try:
        return parse_user_values(image, variant, requirements, min_memory, run)
    except RequestError as exc:
        raise InputError(str(exc)) from None


def request_or_fail(table: "CompatTable", **values: Any) -> "Request":
    from ..doctor.request import RequestError, resolve_request

    try:
        return resolve_request(table, **values)
    except RequestError as exc:
        raise InputError(str(exc)) from None


TODAY_ENV = "CUDADOCTOR_TODAY"


def today_or_fail() -> Optional[str]:
    """$CUDADOCTOR_TODAY (YYYY-MM-DD): the date the table's age is judged at; unset, the facts' probe time is."""
    import datetime
    import os

    text = os.environ.get(TODAY_ENV)
    if not text:
        return None
    try:
        return datetime.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise InputError(f"${TODAY_ENV} {text[:40]!r}: expected a date written YYYY-MM-DD") from None


def gather_facts(
    table: "CompatTable",
    snapshot: Optional[str],
    driver: Optional[str],
    gpus: Sequence[str],
    torch_runtime: bool = False,
    nvml_timeout: Optional[float] = None,
    nvml: Optional["NvmlProbe"] = None,
) -> "HostFacts":
    """The snapshot's facts, or this host's; then the what-if values (validated before probing).
    ``nvml`` is the NVML probe start_nvml_probe began, if any."""
    if driver or gpus:
        from ..host.whatif import WhatIfError, check_what_if

        try:
            check_what_if(driver, gpus, table)
        except WhatIfError as exc:
            raise InputError(str(exc)) from None
    if snapshot:
        from ..app.loader import load_snapshot
        from ..model.snapshot import SnapshotError

        try:
            facts = load_snapshot(snapshot)
        except SnapshotError as exc:
            raise InputError(str(exc)) from None
    else:
        from ..probe.host import probe_host

        if nvml_timeout is None:
            facts = probe_host(torch_runtime=torch_runtime, nvml=nvml)
        else:
            facts = probe_host(torch_runtime=torch_runtime, nvml_timeout=nvml_timeout, nvml=nvml)
    if not (driver or gpus):
        return facts
    from ..host.whatif import apply_what_if

    return apply_what_if(facts, table, driver, gpus)


def start_nvml_probe(snapshot: Optional[str], nvml_timeout: float) -> Optional["NvmlProbe"]:
    """When this host will be probed (no --snapshot), start NVML's child now, so that the driver
    initialises while the table is loaded; the caller hands it to gather_facts, or cancels it."""
    if snapshot:
        return None
    from ..probe.nvml import NvmlWatch

    return NvmlWatch.start(nvml_timeout)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))
