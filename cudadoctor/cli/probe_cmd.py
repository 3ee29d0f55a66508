"""`cudadoctor probe`: the raw host facts, as a snapshot another machine can check."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional

import click

from .errors import InputError
from .inputs import emit_json
from .options import non_empty, nvml_options

if TYPE_CHECKING:
    from ..model.facts import HostFacts


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the host facts as JSON (a snapshot).")
@click.option(
    "--output", "-o", metavar="FILE", callback=non_empty,
    help="Write the snapshot to FILE (atomically: a reader sees the old file or the new one).",
)  # fmt: skip
@click.option(
    "--prometheus", metavar="FILE", callback=non_empty,
    help="Write this host's verdicts as Prometheus metrics to FILE (atomically), for node-exporter's textfile collector.",
)  # fmt: skip
@click.option("--force", is_flag=True, help="With --output or --prometheus: replace FILE even if cudadoctor did not write it.")
@click.option("--torch-runtime", is_flag=True, help="Also import the installed torch (in a child process) and record what it says about CUDA.")
@click.option("--nfd", is_flag=True, help="Print this host's verdicts as a Node Feature Discovery feature file (features.d).")
@nvml_options
def probe(
    as_json: bool, output: Optional[str], force: bool = False, torch_runtime: bool = False, nfd: bool = False,
    nvml_timeout: float = 5.0, prometheus: Optional[str] = None,
) -> None:
    """Read the host's facts (driver, GPUs, ...) without judging them."""
    from ..model.snapshot import snapshot_to_dict
    from ..probe.host import probe_host

    if nfd:
        if prometheus:
            raise click.UsageError("--nfd prints a feature file: give --prometheus on its own run")
        _print_nfd(as_json or bool(output), torch_runtime, nvml_timeout)
        return
    if prometheus:
        from ..app.files import OutputError
        from ..app.loader import check_metrics_target

        try:
            check_metrics_target(prometheus, force)
        except OutputError as exc:
            raise InputError(str(exc)) from None
    if output:
        from ..app.files import OutputError
        from ..app.loader import check_output_target

        try:  # before probing: a wrong target is reported at once, and nothing is written to it
            check_output_target(output, force)
        except OutputError as exc:
            raise InputError(str(exc)) from None
    facts = probe_host(torch_runtime=torch_runtime, nvml_timeout=nvml_timeout)
    data = snapshot_to_dict(facts)
    if prometheus:
        _write_metrics(prometheus, facts, force)
    if output:
        from ..app.files import OutputError, write_in_place_checked
        from ..app.loader import snapshot_guard

        try:  # checked again where it is replaced: a file or symlink swapped in meanwhile is refused
            write_in_place_checked(output, json.dumps(data, indent=2) + "\n", snapshot_guard(output, force))
        except OutputError as exc:
            raise InputError(str(exc)) from None
    if as_json or not (output or prometheus):
        emit_json(data)


def _write_metrics(path: str, facts: "HostFacts", force: bool = False) -> None:
    """--prometheus: this host judged as a fleet of one, its metrics written atomically (the target
    checked again where it is replaced: a file or symlink put there while probing is refused)."""
    from ..about import __version__
    from ..app.files import OutputError, write_in_place_checked
    from ..app.loader import metrics_guard
    from ..doctor.request import resolve_request
    from ..fleet.judge import judge_fleet
    from ..fleet.matrix import coverage_matrix
    from ..fleet.prometheus import prometheus_text
    from ..fleet.sources import SNAPSHOT, FleetHost
    from .inputs import load_table_or_fail

    from ..model.record import replace

    table = load_table_or_fail(None)
    # The metrics name wheel releases: a config's NGC default family must not make them NGC months.
    table = replace(table, default_ngc=None) if table.default_ngc else table
    result = judge_fleet([FleetHost("this-host", "probe", SNAPSHOT, facts)], table, resolve_request(table))
    try:
        write_in_place_checked(path, prometheus_text(result, coverage_matrix(result, table, every_release=True), __version__),
                               metrics_guard(path, force))
    except OutputError as exc:
        raise InputError(str(exc)) from None


def _print_nfd(conflict: bool, torch_runtime: bool, nvml_timeout: float) -> None:
    """--nfd: the feature lines on stdout (a DaemonSet renames them into features.d itself)."""
    if conflict:
        raise click.UsageError("--nfd prints a feature file: give it without --json or --output")
    from ..about import __version__
    from ..fleet.nfd import nfd_features
    from ..probe.host import probe_host
    from .inputs import load_table_or_fail

    table = load_table_or_fail(None)
    click.echo("\n".join(nfd_features(probe_host(torch_runtime=torch_runtime, nvml_timeout=nvml_timeout), table, __version__)))
