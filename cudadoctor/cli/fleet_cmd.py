"""`cudadoctor fleet SOURCE...`: its options and help (click); the work is fleet_run.run_fleet's."""

from __future__ import annotations

from typing import Any

import click

from .errors import UsageProblem
from .fleet_run import run_fleet
from .options import families_options, non_empty, seconds_option, table_options, target_options


@click.command()
@click.argument("sources", nargs=-1, metavar="SOURCE...")
@target_options
@click.option("--variant", metavar="cuNNN", callback=non_empty, help="Judge this CUDA variant of the release instead of finding the best one.")
@click.option("--image", metavar="REF", callback=non_empty, help="Judge this image on every node (inspected once, locally; its NVIDIA_REQUIRE_* judged per node).")
@table_options
@families_options
@click.option("--kubernetes", "live", is_flag=True, help="Read the nodes from the cluster of the current kubeconfig (or in-cluster config); needs cudadoctor[kubernetes].")
@click.option("--context", metavar="NAME", callback=non_empty, help="With --kubernetes: the kubeconfig context.")
@click.option("--selector", metavar="LABELS", callback=non_empty, help="With --kubernetes: a label selector (e.g. nvidia.com/gpu.present=true).")
@seconds_option("--timeout", 0.1, 600, 10.0, "Bound on the Kubernetes API call and on inspecting --image.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["report", "node-affinity", "prometheus", "html"]),
    default="report",
    show_default=True,
    help="node-affinity: a Kubernetes nodeAffinity over GFD labels selecting the nodes that can run the target; "
         "prometheus: the fleet's metrics (text exposition format); html: one self-contained page to share "
         "(the answer, the coverage matrix, the upgrade plan, a chart and the groups).",
)
@click.option("--matrix", "matrix", is_flag=True,
              help="The coverage matrix: every release from the oldest any node runs to the newest, per group of nodes, "
                   "and the newest release every node able to run PyTorch runs.")
@click.option("--plan", "plan", is_flag=True,
              help="The upgrade plan for --torch (else the newest release): the driver each failing group needs, "
                   "ordered by the nodes each step brings in.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema 1) instead of text.")
@click.pass_context
def fleet(ctx: click.Context, /, sources: tuple[str, ...], **options: Any) -> None:
    """Judge every node of a fleet from host snapshots or Kubernetes node labels.

    SOURCE is a host snapshot, a directory of them (*.json, recursive), `kubectl get nodes -o json`
    output, a single Node, or - for standard input."""
    try:
        status = run_fleet({"sources": sources, **options})
    except UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
    ctx.exit(status)
