"""`cudadoctor table`: browse the compatibility table, or validate one; `cudadoctor table update`
refreshes it from PyTorch's wheel index (an overlay in the user cache)."""

from __future__ import annotations

from typing import Any

import click

from ..model.text import shown_path
from .errors import InputError, say
from .inputs import emit_json, load_table_or_fail
from .options import families_options, non_empty, seconds_option, table_options


@click.group("table", invoke_without_command=True)
@click.option("--torch", "torch_release", metavar="X.Y", callback=non_empty, help="One PyTorch release: variants, arch lists, minimum drivers, default wheel.")
@click.option("--gpu", "gpu_name", metavar="NAME", callback=non_empty, help="One GPU product (or compute capability) and the builds that run on it.")
@click.option("--gpus", "list_gpus", is_flag=True, help="The GPU catalog.")
@click.option("--sources", "list_sources", is_flag=True, help="Where each fact comes from.")
@click.option("--validate", "validate_path", metavar="FILE", callback=non_empty, help="Check a table file against every rule; exit 0 valid, 2 broken.")
@table_options
@families_options
@click.option("--json", "as_json", is_flag=True, help="Print the view as JSON.")
@click.pass_context
def table(ctx: click.Context, /, **options: Any) -> None:
    """Browse the compatibility table (driver rows, PyTorch builds, GPUs, sources) or validate one.

    `cudadoctor table update` refreshes it from PyTorch's wheel index."""
    if ctx.invoked_subcommand is not None:
        given = [name for name, value in options.items() if value]
        if given:
            raise InputError(f"give the options of `table {ctx.invoked_subcommand}` after it, not before")
        return
    torch_release, gpu_name = options["torch_release"], options["gpu_name"]
    list_gpus, list_sources, validate_path = options["list_gpus"], options["list_sources"], options["validate_path"]
    views = [name for name, given in (("--torch", torch_release), ("--gpu", gpu_name), ("--gpus", list_gpus),
                                      ("--sources", list_sources), ("--validate", validate_path)) if given]
    if len(views) > 1:
        raise InputError(f"give one of {', '.join(views)}, not several")
    from ..report import table_payload

    if validate_path and options["table_path"]:
        raise InputError("give --validate FILE or --table FILE, not both (--validate checks FILE itself)")
    if validate_path:
        checked = load_table_or_fail(validate_path, options["families_path"])
        summary = table_payload.validation_summary(checked)
        if options["as_json"]:
            emit_json(summary)
        else:
            say(
                f"{shown_path(validate_path)}: valid ({summary['cuda_releases']} CUDA driver rows, {summary['pytorch_releases']} PyTorch "
                f"releases, {summary['gpus']} GPUs, {summary['image_families'] + summary['ngc_families']} image families "
                f"({summary['ngc_families']} of them NGC), {summary['sources']} sources)"
            )
        return
    loaded = load_table_or_fail(options["table_path"], options["families_path"], options["config_path"])
    data: Any = None
    if torch_release:
        from .inputs import request_or_fail

        data = table_payload.release_view(loaded, request_or_fail(loaded, torch=torch_release).release)
    elif gpu_name:
        data = table_payload.gpu_view(loaded, *_resolve_gpu_name(loaded, gpu_name))
    elif list_gpus:
        data = table_payload.gpus_view(loaded)
    elif list_sources:
        data = table_payload.sources_view(loaded)
    if options["as_json"]:
        emit_json(data if data is not None else table_payload.whole_table_view(loaded))
        return
    from ..report import table_text
    from ..report.console import make_console

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
        table_text.render_overview(console, loaded)


def _resolve_gpu_name(loaded: Any, name: str) -> Any:
    from ..host.whatif import WhatIfError, resolve_gpu_spec

    try:
        return resolve_gpu_spec(name, loaded)
    except WhatIfError as exc:
        raise InputError(str(exc)) from None


@table.command("update")
@click.option("--index-url", "index_url", metavar="URL", callback=non_empty,
              help="The wheel index root whose URL/torch/ page lists the torch wheels (default: PyTorch's, from the table's wheel_index).")
@seconds_option("--timeout", 0.1, 3600, 20.0, "Bound on the whole exchange: connecting, redirects, the download and reading the page.")
@click.option("--allow-http", is_flag=True, help="Accept a plain http:// index that is not on loopback (only on a network you trust).")
@click.option("--allow-redirect-host", "redirect_hosts", metavar="HOST", multiple=True, callback=non_empty,
              help="Follow a redirect to this host too (https only; repeatable). Without it only the index's own host is followed.")
@click.option("--dry-run", is_flag=True, help="Print what would change; write nothing.")
@click.option("--clear", is_flag=True, help="Remove the overlay: back to the shipped table.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def update(index_url: str | None, timeout: float, allow_http: bool, redirect_hosts: tuple[str, ...], dry_run: bool, clear: bool,
           as_json: bool) -> None:
    """Refresh the table from PyTorch's wheel index: new releases, variants and platforms, written as an
    overlay to the user cache that every later command merges over the shipped table."""
    from ..app.overlay import clear_overlay, overlay_path

    where = overlay_path()
    if clear:
        if index_url or dry_run or allow_http or redirect_hosts:
            raise InputError("give --clear on its own")
        removed = clear_overlay(where)
        if as_json:
            emit_json({"overlay_path": where, "removed": removed})
        else:
            click.echo(f"removed the table overlay {where}" if removed else f"no table overlay at {where}")
        return
    from . import table_update

    from ..probe.http_get import Policy

    table_update.run(index_url, timeout, dry_run, as_json, where, Policy(allow_http=allow_http, redirect_hosts=redirect_hosts))


@table.command("learn")
@click.argument("source", metavar="WHEEL|URL")
@seconds_option("--timeout", 0.1, 3600, 600.0, "Bound on downloading a URL (connecting, redirects and the download).")
@click.option("--allow-http", is_flag=True, help="Accept a plain http:// URL that is not on loopback (only on a network you trust).")
@click.option("--allow-redirect-host", "redirect_hosts", metavar="HOST", multiple=True, callback=non_empty,
              help="Follow a redirect to this host too (https only; repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def learn(source: str, timeout: float, allow_http: bool, redirect_hosts: tuple[str, ...], as_json: bool) -> None:
    """Read a torch wheel's GPU code from its own libtorch_cuda.so and record its arch list in the
    table overlay (evidence: binary), so a variant no source settles becomes usable."""
    from ..app.overlay import overlay_path
    from . import table_learn

    from ..probe.http_get import Policy

    table_learn.run(source, timeout, as_json, overlay_path(), Policy(allow_http=allow_http, redirect_hosts=redirect_hosts))
