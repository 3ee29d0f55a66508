"""`cudadoctor recommend`: the image tag (--image) or wheel variant (--wheel) that fits."""

from __future__ import annotations

from typing import Any

import click

from .errors import EXIT_FAIL, EXIT_OK, InputError, say
from .inputs import emit_json, gather_facts, load_table_or_fail, request_or_fail, today_or_fail
from .options import families_options, host_options, nvml_options, table_options, target_options


@click.command()
@click.option("--image", "want_image", is_flag=True, help="Recommend an image tag.")
@click.option("--wheel", "want_wheel", is_flag=True, help="Recommend a PyTorch wheel variant.")
@host_options
@target_options
@table_options
@families_options
@nvml_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "tag", "index-url"]),
    default="text",
    show_default=True,
    help="tag: the bare image reference; index-url: the wheel index URL.",
)
@click.pass_context
def recommend(ctx: click.Context, /, **options: Any) -> None:
    """Pick the image tag (--image) or wheel variant (--wheel) that fits this host."""
    from ..doctor import recommend_for

    want_image, want_wheel, fmt = options["want_image"], options["want_wheel"], options["fmt"]
    if want_image and want_wheel:
        raise InputError("give --image or --wheel, not both")
    if not want_image and not want_wheel:
        want_image = fmt != "index-url"
        want_wheel = not want_image
    if fmt == "tag" and not want_image:
        raise InputError("--format tag needs --image")
    if fmt == "index-url" and not want_wheel:
        raise InputError("--format index-url needs --wheel")
    table = load_table_or_fail(options["table_path"], options["families_path"], options["config_path"])
    request = request_or_fail(table, torch=options["torch_release"], family=options["family"], today=today_or_fail())
    if request.ngc is not None and want_wheel:
        raise InputError(f"--family {request.ngc.name} is a family of images: give --image, not --wheel")
    facts = gather_facts(table, options["snapshot"], options["driver"], options["gpus"], nvml_timeout=options["nvml_timeout"],
                         forward_compat=options["forward_compat"])
    rec = recommend_for(facts, table, request, images=want_image)
    if not rec.found:
        # Nothing on stdout (a script's `$(...)` gets "", and `set -e` stops it on the exit status);
        # the reason, the release that fits instead and the fixes go to stderr.
        if fmt == "json":
            from ..report.payload import recommend_payload

            emit_json(recommend_payload(rec, table))
        import sys

        from ..report.text import make_console, render_no_fit

        render_no_fit(make_console(sys.stderr), rec, wheel=want_wheel)
        ctx.exit(EXIT_FAIL)
    if fmt == "tag":
        say(rec.image or "")
    elif fmt == "index-url":
        say(rec.wheel_index_url or "")
    elif fmt == "json":
        from ..report.payload import recommend_payload

        emit_json(recommend_payload(rec, table))
    else:
        from ..report.text import make_console, render_recommendation

        render_recommendation(make_console(), rec, wheel=want_wheel)
    ctx.exit(EXIT_OK)
