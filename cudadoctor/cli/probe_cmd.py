"""`cudadoctor probe`: the raw host facts, as a snapshot another machine can check."""

from __future__ import annotations

import json
from typing import Optional

import click

from .errors import InputError
from .inputs import emit_json


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the host facts as JSON (a snapshot).")
@click.option("--output", "-o", metavar="FILE", help="Write the snapshot to FILE.")
@click.option("--torch-runtime", is_flag=True, help="Also import the installed torch (in a child process) and record what it says about CUDA.")
@click.option("--nfd", is_flag=True, help="Print this host's verdicts as a Node Feature Discovery feature file (features.d).")
def probe(as_json: bool, output: Optional[str], torch_runtime: bool = False, nfd: bool = False) -> None:
    """Read the host's facts (driver, GPUs, ...) without judging them."""
    from ..model.snapshot import snapshot_to_dict
    from ..probe.host import probe_host

    if nfd:
        _print_nfd(as_json or bool(output), torch_runtime)
        return
    data = snapshot_to_dict(probe_host(torch_runtime=torch_runtime))
    if output:
        try:
            with open(output, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2)
                handle.write("\n")
        except OSError as exc:
            raise InputError(f"cannot write {output}: {exc.strerror or exc}") from None
    if as_json or not output:
        emit_json(data)


def _print_nfd(conflict: bool, torch_runtime: bool) -> None:
    """--nfd: the feature lines on stdout (a DaemonSet renames them into features.d itself)."""
    if conflict:
        raise click.UsageError("--nfd prints a feature file: give it without --json or --output")
    from ..about import __version__
    from ..fleet.nfd import nfd_features
    from ..probe.host import probe_host
    from .inputs import load_table_or_fail

    table = load_table_or_fail(None)
    click.echo("\n".join(nfd_features(probe_host(torch_runtime=torch_runtime), table, __version__)))
