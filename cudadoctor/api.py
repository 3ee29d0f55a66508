"""The Python API: ``from cudadoctor import probe, check, recommend``.

The same pipeline as the CLI (the table, the host's facts or a snapshot, the what-if values, the
pure check) without click or rich, returning the same data ``--json`` prints: plain dicts that the
published schemas describe (``cudadoctor schema check`` / ``recommend`` / ``probe``). Nothing here
contacts Docker: an image given to :func:`check` is judged from its reference and the table.

Bad input raises :class:`CudadoctorError` with the one-line message the CLI would print.
See docs/api.md.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

if TYPE_CHECKING:
    from .compat.table import CompatTable
    from .model.facts import HostFacts

#: A host: None (probe this machine), a snapshot as :func:`probe` returns it, or a snapshot file.
Host = Union[None, Mapping[str, Any], str, "os.PathLike[str]"]
PathArg = Union[str, "os.PathLike[str]"]

__all__ = ["CudadoctorError", "Host", "check", "probe", "recommend", "load_table"]


class CudadoctorError(ValueError):
    """Input cudadoctor cannot use (a table, snapshot, release, driver or GPU); one line, as the CLI says it."""


def load_table(table: Optional[PathArg] = None, families: Optional[PathArg] = None) -> "CompatTable":
    """The compatibility table: ``table`` (else $CUDADOCTOR_TABLE, else the shipped one), with the
    image families of ``families`` (else $CUDADOCTOR_FAMILIES) added. Pass the result as ``table=``
    to :func:`check` and :func:`recommend` to read the file once for many calls."""
    from .compat.families import FamiliesError
    from .compat.table import TableError
    from .app.loader import families_path, load_families
    from .app.loader import load_table as read_table

    try:
        loaded = read_table(os.fspath(table) if table is not None else None)
        extra = families_path(os.fspath(families) if families is not None else None)
        return load_families(extra, loaded) if extra else loaded
    except (TableError, FamiliesError) as exc:
        raise CudadoctorError(str(exc)) from None


NVML_TIMEOUT_S = 10.0  # as the CLI's --nvml-timeout default


def _nvml_bound(value: object) -> float:
    """``nvml_timeout`` as the CLI's --nvml-timeout takes it: a real number of seconds, 0.1 to 600."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.1 <= value <= 600:
        raise CudadoctorError(f"nvml_timeout must be a number of seconds from 0.1 to 600, not {value!r:.40}")
    return float(value)


def probe(*, torch_runtime: bool = False, nvml_timeout: float = NVML_TIMEOUT_S) -> dict[str, Any]:
    """This host's facts as a snapshot (the probe schema): what ``cudadoctor probe --json`` prints.
    ``torch_runtime`` also imports the installed torch in a child process; NVML is read in a
    watched child, given up after ``nvml_timeout`` seconds (the snapshot's nvml_state is then "hung")."""
    from .model.snapshot import snapshot_to_dict
    from .probe.host import probe_host

    return snapshot_to_dict(probe_host(torch_runtime=torch_runtime, nvml_timeout=_nvml_bound(nvml_timeout)))


def check(
    host: Host = None,
    *,
    driver: Optional[str] = None,
    gpus: Sequence[str] = (),
    torch: Optional[str] = None,
    variant: Optional[str] = None,
    family: Optional[str] = None,
    image: Optional[str] = None,
    requires: Sequence[str] = (),
    min_memory: Optional[str] = None,
    table: Union[None, PathArg, "CompatTable"] = None,
    families: Optional[PathArg] = None,
    nvml_timeout: float = NVML_TIMEOUT_S,
) -> dict[str, Any]:
    """Judge a host, as ``cudadoctor check --json`` does (the check schema).

    ``host``: None probes this machine; a snapshot dict or file is judged instead. ``driver`` and
    ``gpus`` ("8.0", "A100", ...) are what-if values that replace what the host reports.
    ``torch``, ``variant``, ``family``, ``image``, ``requires`` and ``min_memory`` choose the target
    as the CLI options of the same names do. The result's ``verdict`` is "ok", "warn" or "fail".
    """
    from .doctor import check as run_check
    from .doctor.request import RequestError, parse_user_values, resolve_request
    from .report.payload import check_payload

    if isinstance(gpus, str):
        gpus = (gpus,)
    if isinstance(requires, str):
        requires = (requires,)
    try:
        values = parse_user_values(image, variant, tuple(requires), min_memory)
    except RequestError as exc:
        raise CudadoctorError(str(exc)) from None
    loaded = _table(table, families)
    try:
        request = resolve_request(loaded, torch=torch, family=family, variant=variant, values=values)
    except RequestError as exc:
        raise CudadoctorError(str(exc)) from None
    facts = _facts(host, loaded, driver, gpus, nvml_timeout)
    return check_payload(run_check(facts, loaded, request), loaded)


def recommend(
    host: Host = None,
    *,
    driver: Optional[str] = None,
    gpus: Sequence[str] = (),
    torch: Optional[str] = None,
    family: Optional[str] = None,
    table: Union[None, PathArg, "CompatTable"] = None,
    families: Optional[PathArg] = None,
    nvml_timeout: float = NVML_TIMEOUT_S,
) -> dict[str, Any]:
    """The image and wheel that fit, as ``cudadoctor recommend --format json`` prints them (the
    recommend schema): ``recommendation`` when something fits, else ``no_recommendation`` with the
    fixes (worded and as ``actions``) and the ``alternative`` release that fits."""
    from .doctor import recommend_for
    from .doctor.request import RequestError, resolve_request
    from .report.payload import recommend_payload

    if isinstance(gpus, str):
        gpus = (gpus,)
    loaded = _table(table, families)
    try:
        request = resolve_request(loaded, torch=torch, family=family)
    except RequestError as exc:
        raise CudadoctorError(str(exc)) from None
    facts = _facts(host, loaded, driver, gpus, nvml_timeout)
    return recommend_payload(recommend_for(facts, loaded, request), loaded)


def _table(table: Union[None, PathArg, "CompatTable"], families: Optional[PathArg]) -> "CompatTable":
    from .compat.table import CompatTable

    if isinstance(table, CompatTable):
        if families is None:
            return table
        from .compat.families import FamiliesError
        from .app.loader import load_families

        try:
            return load_families(os.fspath(families), table)
        except FamiliesError as exc:
            raise CudadoctorError(str(exc)) from None
    return load_table(table, families)


def _facts(
    host: Host, table: "CompatTable", driver: Optional[str], gpus: Sequence[str], nvml_timeout: float = NVML_TIMEOUT_S
) -> "HostFacts":
    from .host.whatif import WhatIfError, apply_what_if, check_what_if
    from .model.snapshot import SnapshotError, snapshot_from_dict

    try:
        check_what_if(driver, gpus, table)
    except WhatIfError as exc:
        raise CudadoctorError(str(exc)) from None
    try:
        if host is None:
            from .probe.host import probe_host

            facts = probe_host(nvml_timeout=_nvml_bound(nvml_timeout))
        elif isinstance(host, Mapping):
            # A round trip through JSON: a dict built by hand is read exactly as a file would be.
            facts = snapshot_from_dict(json.loads(json.dumps(host)))
        else:
            from .app.loader import load_snapshot

            facts = load_snapshot(os.fspath(host))
    except SnapshotError as exc:
        raise CudadoctorError(str(exc) if not isinstance(host, Mapping) else f"snapshot: {exc}") from None
    if not (driver or gpus):
        return facts
    return apply_what_if(facts, table, driver, tuple(gpus))
