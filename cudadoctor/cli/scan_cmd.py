"""`cudadoctor scan [PATH ...]`: the GPU code that the CUDA binaries of an environment, a
directory or a wheel really carry, judged against this host's GPUs (or --gpu/--driver)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import click

from .errors import EXIT_FAIL, EXIT_OK, InputError, say
from .help import SectionedCommand
from .inputs import emit_json, load_table_or_fail
from .options import non_empty, nvml_options, seconds_option, table_options


@click.command(
    cls=SectionedCommand,
    sections={
        "What to scan": ["paths", "python", "images", "timeout"],
        "What to judge it against": ["gpus", "driver", "nvml_timeout", "table_path"],
        "Output": ["as_json", "verbose"],
    },
    examples=(
        ("the environment of the python3 on PATH, against this host's GPUs", "cudadoctor scan"),
        ("a virtual environment, planned for another host", 'cudadoctor scan ~/venv --gpu "RTX 5090" --driver 580.65.06'),
        ("a wheel before installing it", "cudadoctor scan flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl --gpu H100"),
        ("a local image, for a script", "cudadoctor scan --image pytorch/pytorch:latest --gpu A100 --json"),
    ),
)
@click.argument("paths", nargs=-1, metavar="[PATH ...]")
@click.option(
    "--python",
    "python",
    metavar="EXE",
    callback=non_empty,
    help="Scan this interpreter's environment (default, without PATH: the python3 on PATH).",
)
@click.option(
    "--gpu",
    "gpus",
    multiple=True,
    metavar="SPEC",
    help="What-if: judge against this GPU (compute capability such as 12.0, or a product such as \"RTX 5090\"); repeatable.",
)
@click.option("--driver", metavar="VERSION", callback=non_empty, help="What-if: judge PTX against this NVIDIA driver (e.g. 580.65.06).")
@click.option(
    "--image",
    "images",
    multiple=True,
    metavar="REF",
    help="Scan a local container image's Python packages, read through the Docker archive API (never run); repeatable.",
)
@seconds_option("--timeout", 0.1, 600, 60.0, "Bound on each Docker daemon call of --image.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema: `cudadoctor schema scan`).")
@click.option("-v", "--verbose", is_flag=True, help="Also list the GPUs each package runs natively on when another GPU fails.")
@table_options
@nvml_options
@click.pass_context
def scan(ctx: click.Context, /, **options: Any) -> None:
    """Read the GPU code in the CUDA binaries of an environment, a directory or a wheel: does each package run here?

    Each package's binaries are judged against this host's GPUs (or --gpu/--driver): natively from
    SASS, by JIT from PTX, or not at all ("no kernel image is available"). Exit 1 when one cannot run."""
    from ..binaries.assess import assess

    paths: Sequence[str] = options["paths"]
    if options["python"] and (paths or options["images"]):
        raise InputError("give PATH or --image, or --python, not both")
    table = load_table_or_fail(options["table_path"])
    gpus, driver = _gpus_and_driver(table, options["gpus"], options["driver"], options["nvml_timeout"])
    sources = _scan(paths, options["python"], options["images"], options["timeout"])
    result = assess(sources, gpus, driver)
    if options["as_json"]:
        from ..report.scan_payload import scan_payload

        emit_json(scan_payload(result))
    else:
        from ..report.scan_text import scan_lines

        for line in scan_lines(result, verbose=options["verbose"]):
            say(line)
    ctx.exit(EXIT_FAIL if result.fails else EXIT_OK)


def _gpus_and_driver(table: Any, gpu_specs: Sequence[str], driver_spec: Optional[str], nvml_timeout: float) -> tuple[tuple[Any, ...], Any]:
    from ..binaries.assess import DriverUnderTest, GpuUnderTest
    from ..host.whatif import WhatIfError, check_what_if, parse_driver, parse_gpu

    try:
        check_what_if(driver_spec, gpu_specs, table)
    except WhatIfError as exc:
        raise InputError(str(exc)) from None
    gpus: tuple[GpuUnderTest, ...] = ()
    driver: Optional[DriverUnderTest] = None
    if gpu_specs:
        facts = [parse_gpu(spec, i, table) for i, spec in enumerate(gpu_specs)]
        gpus = tuple(GpuUnderTest(index=g.index, name=g.name or "GPU", compute_capability=g.compute_capability) for g in facts)
    if driver_spec:
        what_if = parse_driver(driver_spec, table)
        driver = DriverUnderTest(version=what_if.driver_version, cuda=what_if.cuda_driver_version)
    if gpu_specs and driver_spec:
        return gpus, driver
    from ..probe.nvml import probe_nvml_watched

    nvml_driver, nvml_gpus = probe_nvml_watched(nvml_timeout)
    if not gpu_specs:
        gpus = tuple(GpuUnderTest(index=g.index, name=g.name or f"GPU {g.index}", compute_capability=g.compute_capability) for g in nvml_gpus)
    if driver is None and nvml_driver.driver_version:
        driver = DriverUnderTest(version=nvml_driver.driver_version, cuda=nvml_driver.cuda_driver_version)
    return gpus, driver


def _scan(paths: Sequence[str], python: Optional[str], images: Sequence[str], timeout: float) -> tuple[Any, ...]:
    from ..probe.binaries import ScanInputError, scan_environment, scan_path

    try:
        if paths or images:
            sources = [scan_path(path) for path in paths]
            if images:
                from ..probe.image_binaries import scan_image

                sources += [scan_image(reference, timeout) for reference in images]
            return tuple(sources)
        if python is None:
            import shutil

            python = shutil.which("python3")
            if python is None:
                raise InputError("no python3 on PATH: give --python EXE or a PATH to scan")
        return (scan_environment(python),)
    except ScanInputError as exc:
        raise InputError(str(exc)) from None
