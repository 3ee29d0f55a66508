"""`cudadoctor recommend`: the image tag (--image) or wheel variant (--wheel) that fits: its options
and help (click); the work is recommend_run.run_recommend's."""

from __future__ import annotations

from typing import Any

import click

from .options import families_options, host_options, nvml_options, table_options, target_options
from .recommend_run import run_recommend


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
    ctx.exit(run_recommend(options))
