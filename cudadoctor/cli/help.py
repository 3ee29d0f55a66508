"""Help text that reads well: a command's options in named sections, examples at the end, and the
group's command list with each command's whole one-line summary (click cuts it at 45 characters).
click's own HelpFormatter does the layout; nothing else is needed."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import click

OTHER = "Other options"


class SectionedCommand(click.Command):
    """A command whose --help lists options under sections (``sections``: title -> option names,
    the parameters' Python names) and ends with ``examples`` (command lines). An option no section
    names is listed under "Other options", so an option added later is never lost from --help."""

    def __init__(
        self,
        *args: Any,
        sections: Optional[Mapping[str, Sequence[str]]] = None,
        examples: Sequence[tuple[str, str]] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.sections = dict(sections or {})
        self.examples = tuple(examples)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: dict[str, list[tuple[str, str]]] = {title: [] for title in self.sections}
        where = {name: title for title, names in self.sections.items() for name in names}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            title = where.get(param.name or "", OTHER)
            rows.setdefault(title, []).append(record)
        for title, records in rows.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        if not self.examples:
            return
        with formatter.section("Examples"):
            for what, command in self.examples:
                formatter.write_text(f"# {what}")
                # Commands are written as they are, never re-wrapped (they are copied into shells);
                # one wider than the help stands alone at column 0, as the report prints commands.
                indent = formatter.current_indent if formatter.current_indent + len(command) <= (formatter.width or 80) else 0
                formatter.write(f"{' ' * indent}{command}\n")


def command_summary(command: click.Command) -> str:
    """The first line of a command's help, whole."""
    text = command.short_help or (command.help or "")
    return text.strip().split("\n\n")[0].replace("\n", " ").strip()
