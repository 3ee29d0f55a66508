"""`cudadoctor check`: parse, probe, check, render."""

from __future__ import annotations

from typing import Any

import click

from ..model.record import replace
from .errors import InputError
from .help import SectionedCommand
from .inputs import (
    emit_json,
    gather_facts,
    load_table_or_fail,
    request_or_fail,
    start_nvml_probe,
    today_or_fail,
    user_values_or_fail,
    with_topology_or_fail,
)
from .options import (
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
    "--gpus-per-job", "gpus_per_job", type=click.IntRange(1, 64), metavar="N",
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
    from ..doctor import check as run_check

    image, pull, smoke = options["image"], options["pull"], options["smoke"]
    # The values a user typed are checked before any file is read: a typo is reported first.
    if options["quiet"] and options["verbose"]:
        raise InputError("give -q/--quiet or -v/--verbose, not both")
    if (pull or smoke) and image is None and options["run_line"] is None:
        raise InputError(f"{'--pull' if pull else '--smoke'} needs --image REF")
    values = user_values_or_fail(image, options["variant"], options["requires"], options["min_memory"], options["run_line"])
    nvml = start_nvml_probe(options["snapshot"], options["nvml_timeout"], options["driver"], options["gpus"])
    try:
        table = load_table_or_fail(options["table_path"], options["families_path"], options["config_path"])
        request = request_or_fail(
            table, torch=options["torch_release"], family=options["family"], variant=options["variant"], values=values,
            today=today_or_fail(), newer_ok=True,
        )
        if options["gpus_per_job"] is not None:
            request = replace(request, gpus_per_job=options["gpus_per_job"])
        facts = gather_facts(
            table, options["snapshot"], options["driver"], options["gpus"], options["torch_runtime"],
            options["nvml_timeout"], nvml, options["forward_compat"],
        )  # fmt: skip
        if options["topology"]:
            facts = with_topology_or_fail(facts, options["topology"])
    except BaseException:
        if nvml is not None:
            nvml.cancel()
        raise
    image_facts = None
    if request.image is not None or smoke or options["docker"]:
        from ..probe.containers import probe_containers
        from ..report.console import status_line

        docker_facts, image_facts = probe_containers(
            request.image, pull, smoke, options["docker"], options["timeout"],
            pull_timeout=options["pull_timeout"], smoke_timeout=options["smoke_timeout"],
            progress=status_line() if (pull or smoke) else None,
        )  # fmt: skip
        if docker_facts is not None:
            facts = replace(facts, docker=docker_facts)
    from ..doctor.answer import decide

    result = run_check(facts, table, request, image=image_facts)
    answer = decide(result, table)
    if options["as_json"]:
        from ..report.payload import check_payload

        emit_json(check_payload(result, table, answer))
    else:
        from ..report.text import NORMAL, QUIET, VERBOSE, make_console, render_check

        verbosity = QUIET if options["quiet"] else VERBOSE if options["verbose"] else NORMAL
        render_check(make_console(), result, answer, verbosity)
    ctx.exit(result.exit_status(options["strict"]))
