"""The Python API: ``from cudadoctor import probe, check, recommend``.

The same pipeline as the CLI (the table, the host's facts or a snapshot, the what-if values, the
pure check) without click or rich, returning the same data ``--json`` prints: plain dicts that the
published schemas describe (``cudadoctor schema check`` / ``recommend`` / ``probe``). Nothing here
contacts Docker: an image given to :func:`check` is judged from its reference and the table.

Bad input raises :class:`CudadoctorError` with the one-line message the CLI would print.
See docs/api.md.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

if TYPE_CHECKING:
    from .app.inputs import HostSource
    from .compat.table import CompatTable

#: A host: None (probe this machine), a snapshot as :func:`probe` returns it, or a snapshot file.
Host = Union[None, Mapping[str, Any], str, "os.PathLike[str]"]
PathArg = Union[str, "os.PathLike[str]"]

__all__ = ["CudadoctorError", "Host", "check", "probe", "recommend", "load_table"]


class CudadoctorError(ValueError):
    """Input cudadoctor cannot use (a table, snapshot, release, driver or GPU); one line, as the CLI says it."""


def load_table(
    table: Optional[PathArg] = None, families: Optional[PathArg] = None, *, config: Optional[PathArg] = None
) -> "CompatTable":
    """The compatibility table, as the CLI assembles it: ``table`` (else $CUDADOCTOR_TABLE, else
    the config file's ``table``, else the shipped one with the `table update` overlay), with the
    image families of ``families`` (else $CUDADOCTOR_FAMILIES, else the config's) added and the
    config's default ``family`` and ``repository`` applied. ``config`` is a config file that must
    exist; by default $XDG_CONFIG_HOME/cudadoctor/config.toml (else ~/.config/...) is read when
    there is one. Pass the result as ``table=`` to :func:`check` and :func:`recommend` to read the
    files once for many calls."""
    from .app.inputs import InputsError, assemble_table

    try:
        return assemble_table(_path(table), _path(families), _path(config))
    except InputsError as exc:
        raise CudadoctorError(str(exc)) from None


def _path(value: Optional[PathArg]) -> Optional[str]:
    return os.fspath(value) if value is not None else None


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
    gpus_per_job: Optional[int] = None,
    forward_compat: Optional[str] = None,
    topology: Optional[PathArg] = None,
    table: Union[None, PathArg, "CompatTable"] = None,
    families: Optional[PathArg] = None,
    config: Optional[PathArg] = None,
    nvml_timeout: float = NVML_TIMEOUT_S,
) -> dict[str, Any]:
    """Judge a host, as ``cudadoctor check --json`` does (the check schema).

    ``host``: None probes this machine; a snapshot dict or file is judged instead. ``driver`` and
    ``gpus`` ("8.0", "A100", ...) are what-if values that replace what the host reports, as are
    ``forward_compat`` (the CUDA a forward-compatibility libcuda provides, as --forward-compat) and
    ``topology`` (a snapshot file whose GPU pair facts are taken, as --topology).
    ``torch``, ``variant``, ``family``, ``image``, ``requires``, ``min_memory`` and ``gpus_per_job``
    (multi-GPU jobs of N GPUs, 1 to 64) choose the target as the CLI options of the same names do;
    ``table``, ``families`` and ``config`` are read as
    :func:`load_table` reads them, and $CUDADOCTOR_TODAY as the CLI reads it. The result's
    ``verdict`` is "ok", "warn" or "fail".
    """
    from .app import inputs
    from .doctor import check as run_check
    from .report.payload import check_payload

    try:
        values = inputs.user_values(image, variant, _texts(requires), min_memory)
        loaded = _table(table, families, config)
        request = inputs.request_for(
            loaded, torch=torch, family=family, variant=variant, values=values, today=inputs.today(),
            gpus_per_job=gpus_per_job,
        )
        facts = inputs.host_facts(
            loaded, _host(host), driver, _texts(gpus), nvml_timeout=_nvml_bound(nvml_timeout), forward_compat=forward_compat,
        )
        if topology is not None:
            facts = inputs.with_topology(facts, os.fspath(topology))
    except inputs.InputsError as exc:
        raise CudadoctorError(str(exc)) from None
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
    config: Optional[PathArg] = None,
    nvml_timeout: float = NVML_TIMEOUT_S,
    wheel: bool = False,
) -> dict[str, Any]:
    """The image that fits (``wheel=True``: the wheel, which needs no image of the family), as
    ``cudadoctor recommend --image`` (``--wheel``) ``--format json`` prints it (the recommend
    schema): ``recommendation`` when something fits, else ``no_recommendation`` with the fixes
    (worded and as ``actions``) and the ``alternative`` release that fits. With no ``torch``, the
    newest release that runs here (for an image: that has an image in the family). ``table``,
    ``families`` and ``config`` are read as :func:`load_table` reads them."""
    from .app import inputs
    from .doctor import recommend_for
    from .report.payload import recommend_payload

    try:
        loaded = _table(table, families, config)
        request = inputs.request_for(loaded, torch=torch, family=family, today=inputs.today())
        facts = inputs.host_facts(loaded, _host(host), driver, _texts(gpus), nvml_timeout=_nvml_bound(nvml_timeout))
    except inputs.InputsError as exc:
        raise CudadoctorError(str(exc)) from None
    if wheel and not request.family.offers_wheels:
        raise CudadoctorError(f"family {request.family.name} is a family of images: give wheel=False")
    return recommend_payload(recommend_for(facts, loaded, request, images=not wheel), loaded)


def _texts(values: Sequence[str]) -> tuple[str, ...]:
    """``gpus="T4"`` as ``gpus=["T4"]``: one string is one value, not its characters."""
    return (values,) if isinstance(values, str) else tuple(values)


def _host(host: Host) -> "HostSource":
    return host if host is None or isinstance(host, Mapping) else os.fspath(host)


def _table(table: Union[None, PathArg, "CompatTable"], families: Optional[PathArg], config: Optional[PathArg]) -> "CompatTable":
    """A table :func:`load_table` returned is used as it is (its config already applied), with
    ``families`` added; anything else is assembled as :func:`load_table` does."""
    from .app.inputs import add_families, assemble_table
    from .compat.table import CompatTable

    if isinstance(table, CompatTable):
        if config is not None:
            raise CudadoctorError("give config= to load_table(), or a table= that is not a loaded table, not both")
        return add_families(table, os.fspath(families)) if families is not None else table
    return assemble_table(_path(table), _path(families), _path(config))
