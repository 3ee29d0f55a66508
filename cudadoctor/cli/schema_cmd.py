"""`cudadoctor schema NAME`: the JSON Schema (draft 2020-12) of one JSON output."""

from __future__ import annotations

from typing import Optional

import click

from .errors import InputError


@click.command()
@click.argument("name", required=False, metavar="NAME")
def schema(name: Optional[str]) -> None:
    """Print the JSON Schema of a JSON output (check, probe, recommend, table, ...)."""
    from ..app.loader import schema_names, schema_text

    names = schema_names()
    if name is None:
        click.echo("\n".join(names))
        return
    text = schema_text(name)
    if text is None:
        raise InputError(f"no schema named {name!r}: known schemas are {', '.join(names)}")
    click.echo(text, nl=not text.endswith("\n"))
