"""Every input a command reads, assembled once, the same for the CLI and the Python API.

The table (--table / $CUDADOCTOR_TABLE / the config's / the shipped one, with the `table update`
overlay over the shipped one), the families (--families / $CUDADOCTOR_FAMILIES / the config's),
the config file (--config FILE / $XDG_CONFIG_HOME/cudadoctor/config.toml /
~/.config/cudadoctor/config.toml: its default family and repository), the user's values and the
request, the host facts (a snapshot or this host's probe, with the what-if driver and GPUs) and
today's date ($CUDADOCTOR_TODAY).

Every problem is an :class:`InputsError` with the one-line message users see: cli/inputs.py turns
it into the CLI's usage error (exit 2), api.py into CudadoctorError. What a plain `check` does not
need is imported only when it is asked for (the config parser when there is a config file, the
families parser when there are families, the what-if resolver when --driver/--gpu are given).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, Sequence, Union

    from ..compat.table import CompatTable
    from ..doctor.request import Request, UserValues
    from ..model.facts import HostFacts
    from ..probe.nvml import NvmlProbe

    #: A host to judge: None (probe this machine), a snapshot file's path, or a snapshot as a dict.
    HostSource = Union[None, str, Mapping[str, Any]]

TODAY_ENV = "CUDADOCTOR_TODAY"


class InputsError(ValueError):
    """An input cudadoctor cannot use (a file, a variable, a value); one line that says what to do."""


def assemble_table(path: Optional[str] = None, families: Optional[str] = None, config: Optional[str] = None) -> "CompatTable":
    """The table (``path``, else $CUDADOCTOR_TABLE, else the config's, else the shipped one with
    the overlay), plus the families of ``families`` (else $CUDADOCTOR_FAMILIES, else the config's),
    with the config's default family and repository applied. ``config``: a file that must exist;
    None reads the user's default config file when there is one."""
    from .loader import FAMILIES_ENV, TABLE_ENV, families_path, load_config, load_table
    from ..compat.table import TableError

    try:
        settings = load_config(config)
    except ValueError as exc:  # ConfigError (its module loads only when there is a config file)
        raise InputsError(str(exc)) from None
    if settings is not None and not path and not os.environ.get(TABLE_ENV) and settings.table:
        path = settings.table
    try:
        table = load_table(path)
    except TableError as exc:
        raise InputsError(str(exc)) from None
    chosen = families_path(families)
    extra = [chosen] if chosen else ([] if os.environ.get(FAMILIES_ENV) or settings is None else list(settings.families))
    for name in extra:
        table = add_families(table, name)
    if settings is None:
        return table
    from ..compat.config import ConfigError, apply_config

    try:
        return apply_config(table, settings)
    except ConfigError as exc:
        raise InputsError(str(exc)) from None


def add_families(table: "CompatTable", path: str) -> "CompatTable":
    """The table with the families of one TOML file added after its own."""
    from .loader import load_families
    from ..compat.families import FamiliesError

    try:
        return load_families(path, table)
    except FamiliesError as exc:
        raise InputsError(str(exc)) from None


def user_values(
    image: Optional[str], variant: Optional[str], requirements: Sequence[str], min_memory: Optional[str],
    run: Optional[str] = None,
) -> "UserValues":
    """--image, --run, --require and --min-memory, each checked before any file is read."""
    from ..doctor.request import RequestError, parse_user_values

    try:
        return parse_user_values(image, variant, tuple(requirements), min_memory, run)
    except RequestError as exc:
        raise InputsError(str(exc)) from None


def request_for(table: "CompatTable", **values: Any) -> "Request":
    """The request (doctor.request.resolve_request's keywords), resolved against the table."""
    from ..doctor.request import RequestError, resolve_request

    try:
        return resolve_request(table, **values)
    except RequestError as exc:
        raise InputsError(str(exc)) from None


def today(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """$CUDADOCTOR_TODAY (YYYY-MM-DD): the date the table's age is judged at; unset, the facts' probe time is."""
    from ..model.dates import iso_date

    text = (os.environ if environ is None else environ).get(TODAY_ENV)
    if not text:
        return None
    try:
        return iso_date(text.strip())
    except ValueError:
        raise InputsError(f"${TODAY_ENV} {text[:40]!r}: expected a date written YYYY-MM-DD") from None


def nvml_replaced(driver: Optional[str], gpus: Sequence[str]) -> bool:
    """True when the what-if flags replace every fact NVML gives, so that NVML is not asked at all
    (no child, no nvidia-ml-py): --driver replaces the whole DriverFacts (version, CUDA, state) and
    --gpu every GpuFacts (with the MIG devices and the topology NVML read for it). --forward-compat
    replaces no NVML fact; --driver alone keeps NVML's GPUs, --gpu alone NVML's driver."""
    return bool(driver) and len(tuple(gpus)) > 0


def host_facts(
    table: "CompatTable",
    host: HostSource,
    driver: Optional[str] = None,
    gpus: Sequence[str] = (),
    torch_runtime: bool = False,
    nvml_timeout: Optional[float] = None,
    nvml: Optional["NvmlProbe"] = None,
    forward_compat: Optional[str] = None,
) -> "HostFacts":
    """The facts of ``host`` (a snapshot file or dict; None: this host's probe), then the what-if
    driver, GPUs and forward-compatibility libcuda, which are validated before anything is read or
    probed. ``nvml`` is the NVML probe :func:`start_nvml_probe` began, if any."""
    gpus = tuple(gpus)
    if driver or gpus or forward_compat:
        from ..host.whatif import WhatIfError, check_what_if

        try:
            check_what_if(driver, gpus, table, forward_compat)
        except WhatIfError as exc:
            raise InputsError(str(exc)) from None
    if host is None:
        from ..probe.host import probe_host

        facts = probe_host(
            torch_runtime=torch_runtime, nvml_timeout=nvml_timeout, nvml=nvml, with_nvml=not nvml_replaced(driver, gpus)
        )
    else:
        facts = _snapshot(host)
    if not (driver or gpus or forward_compat):
        return facts
    from ..host.whatif import apply_what_if

    return apply_what_if(facts, table, driver, gpus, forward_compat)


def _snapshot(host: Union[str, Mapping[str, Any]]) -> "HostFacts":
    from ..model.snapshot import SnapshotError

    if isinstance(host, Mapping):
        import json

        from ..model.snapshot import snapshot_from_dict

        try:  # a round trip through JSON: a dict built by hand is read exactly as a file would be
            data = json.loads(json.dumps(host, allow_nan=False))
        except (TypeError, ValueError, RecursionError) as exc:  # a set, NaN, a cycle: not JSON at all
            raise InputsError(f"snapshot: not a JSON document ({str(exc)[:80]})") from None
        try:
            return snapshot_from_dict(data)
        except SnapshotError as exc:
            raise InputsError(f"snapshot: {exc}") from None
    from .loader import load_snapshot

    try:
        return load_snapshot(host)
    except SnapshotError as exc:
        raise InputsError(str(exc)) from None


def with_topology(facts: "HostFacts", path: str) -> "HostFacts":
    """--topology FILE: the GPUs with the pair facts of that snapshot; every problem is one line."""
    from ..host.topology_plan import TopologyError, apply_topology
    from ..model.snapshot import SnapshotError
    from ..model.text import shown_path
    from .loader import load_snapshot

    try:
        return apply_topology(facts, load_snapshot(path), shown_path(path))
    except (SnapshotError, TopologyError) as exc:
        raise InputsError(str(exc)) from None


def start_nvml_probe(
    host: HostSource, nvml_timeout: float, driver: Optional[str] = None, gpus: Sequence[str] = ()
) -> Optional["NvmlProbe"]:
    """When this host will be probed (no snapshot) and NVML will be asked (not every NVML fact is
    replaced by --driver and --gpu: :func:`nvml_replaced`), start NVML's child now, so that the
    driver initialises while the table is loaded; the caller hands it to :func:`host_facts`, or
    cancels it when the command fails first."""
    if host is not None or nvml_replaced(driver, gpus):
        return None
    from ..probe.nvml import NvmlWatch

    return NvmlWatch.start(nvml_timeout, libcuda=True)  # host_facts' probe_host reads both
