"""Command line: thin click layer over probe -> rules -> recommend -> report.

Exit status (a contract for scripts): 0 nothing fails, 1 something fails (or warns under
--strict; for `recommend`: nothing fits), 2 usage error or unreadable input, 3 internal error.
Heavy imports (rich, docker, torch) happen inside the commands that need them.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Optional, Sequence

import click

from . import __version__

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class InputError(click.ClickException):
    """Bad user input: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        click.echo(f"cudadoctor: error: {self.format_message()}", err=True)


# --- shared option groups --------------------------------------------------------------------


def _finite(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if isinstance(value, float) and value != value:  # NaN slips through FloatRange's comparisons
        raise click.BadParameter("not a number of seconds", ctx=ctx, param=param)
    return value


def non_empty(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """An option given as "" is a script's unset variable, not a request for the default."""
    if isinstance(value, str) and not value.strip():
        raise click.BadParameter("the value is empty", ctx=ctx, param=param)
    return value


def table_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--table",
        "table_path",
        metavar="FILE",
        callback=non_empty,
        help="Use this compatibility table instead of the shipped one (also $CUDADOCTOR_TABLE).",
    )(fn)


def families_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--families",
        "families_path",
        metavar="FILE",
        callback=non_empty,
        help="Add the image families defined in this TOML file (also $CUDADOCTOR_FAMILIES).",
    )(fn)


def host_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--gpu",
        "gpus",
        multiple=True,
        metavar="SPEC",
        help="What-if: a GPU (compute capability such as 8.0, or a product such as A100); repeatable.",
    )(fn)
    fn = click.option("--driver", metavar="VERSION", callback=non_empty, help="What-if: pretend this NVIDIA driver is installed (e.g. 535.104.05).")(fn)
    fn = click.option("--snapshot", metavar="FILE", callback=non_empty, help="Evaluate a saved host snapshot instead of probing this host.")(fn)
    return fn


def target_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--family", metavar="NAME", callback=non_empty, help="Image family (default: pytorch-cuda).")(fn)
    fn = click.option("--torch", "torch_release", metavar="X.Y", callback=non_empty, help="PyTorch release (default: the newest the table fully records).")(fn)
    return fn


def container_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--timeout",
        type=click.FloatRange(0.1, 600),
        callback=_finite,
        default=5.0,
        show_default=True,
        metavar="SECONDS",
        help="Bound on each call to the Docker daemon.",
    )(fn)
    fn = click.option("--docker", is_flag=True, help="Check that Docker can run GPU containers (daemon, NVIDIA runtime, CDI).")(fn)
    fn = click.option("--smoke", is_flag=True, help="Run --image once with GPUs, no network, removed afterwards, and report what happened.")(fn)
    fn = click.option(
        "--require",
        "requires",
        multiple=True,
        metavar="STRING",
        help="Evaluate an NVIDIA_REQUIRE_* string (e.g. 'cuda>=12.8') as nvidia-container-cli would; repeatable.",
    )(fn)
    fn = click.option("--pull", is_flag=True, help="Pull --image when it is not present locally.")(fn)
    fn = click.option("--image", metavar="REF", help="Check a container image (inspected locally; pulled only with --pull).")(fn)
    return fn


def validate_container_options(image, pull, requires, smoke, variant):
    """Check --image/--require/... before anything talks to Docker; returns the parsed reference."""
    if image is None and not (pull or smoke or requires):
        return None
    from .imageref import ImageRefError, parse_image_ref
    from .requirements import RequirementError, validate_requirement

    ref = None
    if image is not None:
        try:
            ref = parse_image_ref(image)
        except ImageRefError as exc:
            raise InputError(f"--image: {exc}") from None
    if (pull or smoke) and ref is None:
        raise InputError(f"{'--pull' if pull else '--smoke'} needs --image REF")
    if ref is not None and variant:
        raise InputError("give --image or --variant, not both (the image decides the variant)")
    for text in requires:
        if not text.replace(",", " ").strip():
            # libnvidia-container would take it as satisfied; on a command line it is a mistake.
            raise InputError(f"--require {text!r}: no condition in it: give e.g. 'cuda>=12.8' or 'driver>=550'")
        try:
            validate_requirement(text)
        except RequirementError as exc:
            shown = text if len(text) <= 80 else text[:77] + "..."
            raise InputError(f"--require {shown!r}: bad token {exc.token[:80]!r}: {exc.reason}") from None
    return ref


# --- helpers ---------------------------------------------------------------------------------


def load_table_or_fail(path: Optional[str], families: Optional[str] = None):
    """The table (--table / $CUDADOCTOR_TABLE / shipped), plus the families of --families / $CUDADOCTOR_FAMILIES."""
    from .families import FamiliesError, families_path_from_env, load_families
    from .table import TableError, load_table

    try:
        table = load_table(path)
    except TableError as exc:
        raise InputError(str(exc)) from None
    families = families_path_from_env(families)
    if families:
        try:
            table = load_families(families, table)
        except FamiliesError as exc:
            raise InputError(str(exc)) from None
    return table


def resolve_release(table, version: Optional[str]):
    if not version:
        return table.default_release
    text = version.strip()
    release = table.release(text)
    if release is not None:
        return release
    known = ", ".join(r.version for r in table.pytorch_releases)
    import re

    if not re.match(r"^\d+\.\d+(\.\d+)?$", text):
        raise InputError(f"invalid --torch {version!r}: expected a PyTorch release such as 2.5 (known: {known})")
    raise InputError(f"unknown PyTorch release {version!r}: the table knows {known} (a newer table can be given with --table)")


def resolve_family(table, name: Optional[str]):
    if not name:
        return table.image_families[0]
    family = table.family(name.strip())
    if family is None:
        known = ", ".join(f.name for f in table.image_families)
        raise InputError(f"unknown image family {name!r}: known families are {known}")
    return family


def gather_facts(table, snapshot: Optional[str], driver: Optional[str], gpus: Sequence[str], torch_runtime: bool = False):
    from .facts import SnapshotError, load_snapshot
    from .whatif import WhatIfError, apply_what_if, parse_driver, parse_gpu

    # Validate what-if values before probing, so a typo fails fast.
    try:
        if driver:
            parse_driver(driver, table)
        for i, spec in enumerate(gpus):
            parse_gpu(spec, i, table)
    except WhatIfError as exc:
        raise InputError(str(exc)) from None
    if snapshot:
        try:
            facts = load_snapshot(snapshot)
        except SnapshotError as exc:
            raise InputError(str(exc)) from None
    else:
        from .probe.host import probe_host

        facts = probe_host(torch_runtime=torch_runtime)
    return apply_what_if(facts, table, driver, gpus)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))


# --- commands --------------------------------------------------------------------------------


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="cudadoctor")
def cli() -> None:
    """Will a CUDA PyTorch workload run on this host, and which image or wheel fits it?"""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the host facts as JSON (a snapshot).")
@click.option("--output", "-o", metavar="FILE", help="Write the snapshot to FILE.")
@click.option("--torch-runtime", is_flag=True, help="Also import the installed torch (in a child process) and record what it says about CUDA.")
@click.pass_context
def probe(ctx: click.Context, as_json: bool, output: Optional[str], torch_runtime: bool = False) -> None:
    """Read the host's facts (driver, GPUs, ...) without judging them."""
    from .facts import snapshot_to_dict
    from .probe.host import probe_host

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


@cli.command()
@host_options
@target_options
@click.option("--variant", metavar="cuNNN", callback=non_empty, help="Check this CUDA variant of the release instead of the recommended one.")
@table_options
@families_options
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema 1) instead of the report.")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option("--min-memory", "min_memory", metavar="SIZE", help="Warn when a GPU CUDA will use has less memory (e.g. 16GiB, 24GB).")
@click.option("--torch-runtime", is_flag=True, help="Import the installed torch (in a child process) to check what it sees.")
@container_options
@click.pass_context
def check(
    ctx: click.Context,
    snapshot: Optional[str],
    driver: Optional[str],
    gpus: tuple[str, ...],
    torch_release: Optional[str],
    family: Optional[str],
    variant: Optional[str],
    table_path: Optional[str],
    families_path: Optional[str],
    as_json: bool,
    strict: bool,
    min_memory: Optional[str] = None,
    torch_runtime: bool = False,
    image: Optional[str] = None,
    pull: bool = False,
    requires: tuple[str, ...] = (),
    smoke: bool = False,
    docker: bool = False,
    timeout: float = 5.0,
) -> None:
    """Check that this host can run a CUDA PyTorch workload, and say why not."""
    from .doctor import run_check

    image_ref = validate_container_options(image, pull, requires, smoke, variant)
    min_memory_bytes = None
    if min_memory is not None:
        from .sizes import SizeError, parse_size

        try:
            min_memory_bytes = parse_size(min_memory)
        except SizeError as exc:
            raise InputError(f"--min-memory: {exc}") from None

    table = load_table_or_fail(table_path, families_path)
    release = resolve_release(table, torch_release)
    image_family = resolve_family(table, family)
    if variant and release.variant(variant.strip()) is None:
        known = ", ".join(v.name for v in release.variants)
        raise InputError(f"PyTorch {release.version} has no variant {variant!r}: it ships {known}")
    facts = gather_facts(table, snapshot, driver, gpus, torch_runtime=torch_runtime)
    if image_ref is not None or requires or smoke or docker:
        from .containercheck import run_container_check

        result = run_container_check(
            facts, table, release, image_family, image_ref, pull, requires, smoke, docker, timeout, bool(torch_release),
            variant=variant.strip() if variant else None, min_memory_bytes=min_memory_bytes,
        )
    else:
        result = run_check(
            facts, table, release, image_family, variant.strip() if variant else None, min_memory_bytes=min_memory_bytes
        )
    if as_json:
        from .report.payload import check_payload

        emit_json(check_payload(result, table))
    else:
        from .report.text import make_console, render_check

        render_check(make_console(), result)
    ctx.exit(result.exit_status(strict))


@cli.command()
@click.option("--image", "want_image", is_flag=True, help="Recommend an image tag.")
@click.option("--wheel", "want_wheel", is_flag=True, help="Recommend a PyTorch wheel variant.")
@host_options
@target_options
@table_options
@families_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "tag", "index-url"]),
    default="text",
    show_default=True,
    help="tag: the bare image reference; index-url: the wheel index URL.",
)
@click.pass_context
def recommend(
    ctx: click.Context,
    want_image: bool,
    want_wheel: bool,
    snapshot: Optional[str],
    driver: Optional[str],
    gpus: tuple[str, ...],
    torch_release: Optional[str],
    family: Optional[str],
    table_path: Optional[str],
    families_path: Optional[str],
    fmt: str,
) -> None:
    """Pick the image tag (--image) or wheel variant (--wheel) that fits this host."""
    from .recommend import recommend as pick

    if want_image and want_wheel:
        raise InputError("give --image or --wheel, not both")
    if not want_image and not want_wheel:
        want_image = fmt != "index-url"
        want_wheel = not want_image
    if fmt == "tag" and not want_image:
        raise InputError("--format tag needs --image")
    if fmt == "index-url" and not want_wheel:
        raise InputError("--format index-url needs --wheel")
    table = load_table_or_fail(table_path, families_path)
    release = resolve_release(table, torch_release)
    image_family = resolve_family(table, family)
    facts = gather_facts(table, snapshot, driver, gpus)
    rec = pick(facts, table, release, image_family)
    if not rec.found:
        reason = f"cudadoctor: no fit: {rec.why}"
        if rec.fixes:
            reason += "; " + "; ".join(rec.fixes)
        if fmt == "json":
            from .report.payload import recommend_payload

            emit_json(recommend_payload(rec, table))
        click.echo(reason, err=True)
        for rejection in rec.rejected:
            click.echo(f"  {rejection.variant}: {rejection.reason}", err=True)
        ctx.exit(EXIT_FAIL)
    if fmt == "tag":
        click.echo(rec.image)
    elif fmt == "index-url":
        click.echo(rec.wheel_index_url)
    elif fmt == "json":
        from .report.payload import recommend_payload

        emit_json(recommend_payload(rec, table))
    else:
        from .report.text import make_console, render_recommendation

        render_recommendation(make_console(), rec)
    ctx.exit(EXIT_OK)


@cli.command("table")
@click.option("--torch", "torch_release", metavar="X.Y", callback=non_empty, help="One PyTorch release: variants, arch lists, minimum drivers, default wheel.")
@click.option("--gpu", "gpu_name", metavar="NAME", callback=non_empty, help="One GPU product (or compute capability) and the builds that run on it.")
@click.option("--gpus", "list_gpus", is_flag=True, help="The GPU catalog.")
@click.option("--sources", "list_sources", is_flag=True, help="Where each fact comes from.")
@click.option("--validate", "validate_path", metavar="FILE", callback=non_empty, help="Check a table file against every rule; exit 0 valid, 2 broken.")
@table_options
@families_options
@click.option("--json", "as_json", is_flag=True, help="Print the view as JSON.")
def table_command(
    torch_release: Optional[str],
    gpu_name: Optional[str],
    list_gpus: bool,
    list_sources: bool,
    validate_path: Optional[str],
    table_path: Optional[str],
    families_path: Optional[str],
    as_json: bool,
) -> None:
    """Browse the compatibility table (driver rows, PyTorch builds, GPUs, sources) or validate one."""
    views = [name for name, given in (("--torch", torch_release), ("--gpu", gpu_name), ("--gpus", list_gpus),
                                      ("--sources", list_sources), ("--validate", validate_path)) if given]
    if len(views) > 1:
        raise InputError(f"give one of {', '.join(views)}, not several")
    from . import tableview

    if validate_path and table_path:
        raise InputError("give --validate FILE or --table FILE, not both (--validate checks FILE itself)")
    if validate_path:
        table = load_table_or_fail(validate_path, families_path)
        summary = tableview.validation_summary(table)
        if as_json:
            emit_json(summary)
        else:
            click.echo(
                f"{validate_path}: valid ({summary['cuda_releases']} CUDA driver rows, {summary['pytorch_releases']} PyTorch "
                f"releases, {summary['gpus']} GPUs, {summary['image_families']} image families, {summary['sources']} sources)"
            )
        return
    table = load_table_or_fail(table_path, families_path)
    if torch_release:
        data: Any = tableview.release_view(table, resolve_release(table, torch_release))
    elif gpu_name:
        data = tableview.gpu_view(table, *_resolve_gpu_name(table, gpu_name))
    elif list_gpus:
        data = tableview.gpus_view(table)
    elif list_sources:
        data = tableview.sources_view(table)
    else:
        data = None
    if as_json:
        emit_json(data if data is not None else tableview.whole_table_view(table))
        return
    from .report import table_text
    from .report.text import make_console

    console = make_console()
    if torch_release:
        table_text.render_release(console, data)
    elif gpu_name:
        table_text.render_gpu(console, data)
    elif list_gpus:
        table_text.render_gpus(console, data)
    elif list_sources:
        table_text.render_sources(console, data)
    else:
        table_text.render_overview(console, table)


def _resolve_gpu_name(table, name: str):
    from .whatif import WhatIfError, resolve_gpu_spec

    try:
        return resolve_gpu_spec(name, table)
    except WhatIfError as exc:
        raise InputError(str(exc)) from None


# --- entry point -----------------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console-script entry: one-line errors, the documented exit codes, never a traceback."""
    try:
        status = cli.main(args=list(argv) if argv is not None else None, prog_name="cudadoctor", standalone_mode=False)
    except click.UsageError as exc:
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        click.echo(f"cudadoctor: error: {exc.format_message()}{where}", err=True)
        status = EXIT_USAGE
    except click.ClickException as exc:
        exc.show()
        status = exc.exit_code
    except click.exceptions.Abort:
        click.echo("cudadoctor: aborted", err=True)
        status = 130
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        status = EXIT_FAIL
    except Exception as exc:  # a bug: say so in one line rather than dump a traceback on a user
        click.echo(f"cudadoctor: internal error: {type(exc).__name__}: {exc} (please report this)", err=True)
        status = EXIT_INTERNAL
    sys.exit(status if isinstance(status, int) else EXIT_OK)
