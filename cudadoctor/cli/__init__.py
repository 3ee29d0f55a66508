"""Command line: a thin click layer over parse -> probe -> check -> render.

Exit status (a contract for scripts): 0 nothing fails, 1 something fails (or warns under
--strict; for `recommend`: nothing fits), 2 usage error or unreadable input, 3 internal error.
click lives here only; heavy imports (rich, docker, torch) happen inside the commands that need them.
"""

from __future__ import annotations

import importlib
import sys
from typing import Optional, Sequence

import click

from ..about import __version__
from ..report.console import prepare_streams
from .errors import EXIT_FAIL, EXIT_INTERNAL, EXIT_USAGE, InputError, say_error

# command name -> (module in this package, the click command in it). A run imports only the
# module of the command it runs (click's documented pattern for lazily loaded subcommands).
COMMANDS = {
    "check": ("check_cmd", "check"),
    "fleet": ("fleet_cmd", "fleet"),
    "probe": ("probe_cmd", "probe"),
    "recommend": ("recommend_cmd", "recommend"),
    "scan": ("scan_cmd", "scan"),
    "schema": ("schema_cmd", "schema"),
    "table": ("table_cmd", "table"),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command with its whole one-line summary (click's default cuts it at 45 characters)."""
        from .help import command_summary

        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command_summary(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name not in COMMANDS:
            return None
        module, attribute = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(f".{module}", __name__), attribute)
        return command


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Run `cudadoctor COMMAND --help` for a command's options. Shell completion: "
    "eval \"$(_CUDADOCTOR_COMPLETE=bash_source cudadoctor)\" (zsh_source, fish_source for those shells).",
)
@click.version_option(__version__, "--version", prog_name="cudadoctor")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Will a CUDA PyTorch workload run on this host, and which image or wheel fits it?"""
    if ctx.invoked_subcommand is None:  # a bare `cudadoctor`: the help, and success
        click.echo(ctx.get_help())
        ctx.exit(0)


def _shorter(message: str, suffix: str) -> str:
    """The message, cut so that the suffix that follows it still fits in one bounded line."""
    from ..model.text import LINE_LIMIT, one_line

    return one_line(message, max(LINE_LIMIT - len(suffix) - 40, 80))


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Console-script entry: one-line errors, the documented exit codes, never a traceback.
    Run as a process (no ``argv``), SIGINT, SIGTERM and SIGHUP kill the probe children and end
    the command with 130, 143 or 129 after its clean-up (created containers removed)."""
    if argv is None:
        from ..probe.watchdog import exit_on_signals

        exit_on_signals()
    prepare_streams()
    try:
        status = cli.main(args=list(argv) if argv is not None else None, prog_name="cudadoctor", standalone_mode=False)
    except click.UsageError as exc:
        where = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        say_error(f"error: {_shorter(exc.format_message(), where)}{where}")
        status = EXIT_USAGE
    except click.ClickException as exc:
        exc.show()
        status = exc.exit_code
    except click.exceptions.Abort:
        say_error("aborted")
        status = 130
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        status = EXIT_FAIL
    except Exception as exc:  # a bug: say so in one line rather than dump a traceback on a user
        say_error(f"internal error: {type(exc).__name__}: {_shorter(str(exc), ' (please report this)')} (please report this)")
        status = EXIT_INTERNAL
    sys.exit(status if isinstance(status, int) else 0)


__all__ = ["cli", "main", "InputError"]
