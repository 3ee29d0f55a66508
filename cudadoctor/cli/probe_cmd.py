"""`cudadoctor probe`: the raw host facts, as a snapshot another machine can check."""

from __future__ import annotations

import json
from typing import Optional

import click

from .errors import InputError
from .inputs import emit_json
from .options import non_empty, nvml_options


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the host facts as JSON (a snapshot).")
@click.option(
    "--output", "-o", metavar="FILE", callback=non_empty,
    help="Write the snapshot to FILE (atomically: a reader sees the old file or the new one).",
)  # fmt: skip
@click.option("--force", is_flag=True, help="With --output: replace FILE even if it is not a cudadoctor snapshot.")
@click.option("--torch-runtime", is_flag=True, help="Also import the installed torch (in a child process) and record what it says about CUDA.")
@click.option("--nfd", is_flag=True, help="Print this host's verdicts as a Node Feature Discovery feature file (features.d).")
@nvml_options
def probe(
    as_json: bool, output: Optional[str], force: bool = False, torch_runtime: bool = False, nfd: bool = False,
    nvml_timeout: float = 5.0,
) -> None:
    """Read the host's facts (driver, GPUs, ...) without judging them."""
    from ..model.snapshot import snapshot_to_dict
    from ..probe.host import probe_host

    if nfd:
        _print_nfd(as_json or bool(output), torch_runtime, nvml_timeout)
        return
    if output:
        from ..app.files import OutputError
        from ..app.loader import check_output_target

        try:  # before probing: a wrong target is reported at once, and nothing is written to it
            check_output_target(output, force)
        except OutputError as exc:
            raise InputError(str(exc)) from None
    data = snapshot_to_dict(probe_host(torch_runtime=torch_runtime, nvml_timeout=nvml_timeout))
    if output:
        from ..app.files import OutputError, write_in_place_checked
        from ..app.loader import snapshot_guard

        try:  # checked again where it is replaced: a file or symlink swapped in meanwhile is refused
            write_in_place_checked(output, json.dumps(data, indent=2) + "\n", snapshot_guard(output, force))
        except OutputError as exc:
            raise InputError(str(exc)) from None
    if as_json or not output:
        emit_json(data)


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
