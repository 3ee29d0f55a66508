"""`cudadoctor check`: its options and help (click); the work is check_run.run_check's."""

from __future__ import annotations

from typing import Any

import click

from ..model.topology import MAX_GPUS_PER_JOB
from .check_run import run_check
from .help import SectionedCommand
from .options import (
    Count,
    container_options,
    families_options,
    host_options,
    non_empty,
    nvml_options,
    table_options,
    target_options,
    verbosity_options,
)


@click.command(
    cls=SectionedCommand,
    sections={
        "Target (what the host is judged for)": ("torch_release", "family", "variant", "requires", "min_memory", "gpus_per_job"),
        "Host (what-if: plan for another machine)": ("snapshot", "driver", "gpus", "forward_compat", "topology", "torch_runtime", "nvml_timeout"),
        "Containers": ("image", "run_line", "pull", "smoke", "docker", "timeout", "pull_timeout", "smoke_timeout"),
        "Output": ("as_json", "strict", "quiet", "verbose", "help"),
        "Table and team defaults": ("table_path", "families_path", "config_path"),
    },
    examples=(
        ("this host: the answer first, then what to fix", "cudadoctor check"),
        ("plan for a T4 on driver 535 from any machine", "cudadoctor check --driver 535.104.05 --gpu T4"),
        ("a saved snapshot, one PyTorch release", "cudadoctor check --snapshot host.json --torch 2.8"),
        ("an image, and whether Docker can give it the GPUs", "cudadoctor check --image pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime --docker"),
        ("in a script: the verdict as JSON, warnings fail too", "cudadoctor check --json --strict > preflight.json"),
    ),
)
@host_options
@target_options
@click.option("--variant", metavar="cuNNN", callback=non_empty, help="Check this CUDA variant of the release instead of the recommended one.")
@table_options
@families_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema 1) instead of the report.")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option("--min-memory", "min_memory", metavar="SIZE", help="Warn when a GPU CUDA will use has less memory (e.g. 16GiB, 24GB).")
@click.option(
    "--gpus-per-job", "gpus_per_job", type=Count(1, MAX_GPUS_PER_JOB), metavar="N",
    help="Judge this host for multi-GPU jobs of N GPUs each (DDP/FSDP over NCCL): the paths between them, shared memory, the launch line.",
)
@click.option(
    "--topology", "topology", metavar="FILE", callback=non_empty,
    help="Take how the GPUs reach each other (pairs, NVLink, fabric) from this snapshot (a what-if for multi-GPU jobs).",
)
@click.option("--torch-runtime", is_flag=True, help="Import the installed torch (in a child process) to check what it sees.")
@container_options
@click.option("--run", "run_line", metavar="'docker run ...'", help="Judge this launch command line together with the image it names (that image is the one judged).")
@verbosity_options
@nvml_options
@click.pass_context
def check(ctx: click.Context, /, **options: Any) -> None:
    """Check that this host can run a CUDA PyTorch workload, and say why not."""
    ctx.exit(run_check(options))
