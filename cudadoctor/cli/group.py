"""The click group: every command line the fast path (cli/fast.py) does not take, with help,
completion and click's usage errors.

Exit status (a contract for scripts): 0 nothing fails, 1 something fails (or warns under
--strict; for `recommend`: nothing fits), 2 usage error or unreadable input, 3 internal error.
click lives in cli/ only; heavy imports (rich, docker, torch) happen inside the commands that need them.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Optional, Sequence

import click

from ..about import __version__
from ..report.console import prepare_streams
from .commands import COMMANDS
from .errors import EXIT_FAIL, EXIT_USAGE, InputError, say_error, say_internal_error, shorter


class UsageInputError(click.ClickException):
    """An InputError raised inside a command, as click shows it: one line on stderr, exit 2."""

    exit_code = EXIT_USAGE

    def show(self, file: Any = None) -> None:
        say_error(f"error: {self.format_message()}")


class LazyGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        # The commands' bodies are click-free (the fast path runs them too) and raise InputError;
        # here it becomes the ClickException click's runner and main() show.
        try:
            return super().invoke(ctx)
        except InputError as exc:
            raise UsageInputError(exc.message) from None

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
        command: click.Command = getattr(importlib.import_module(f".{module}", __package__), attribute)
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
        say_error(f"error: {shorter(exc.format_message(), where)}{where}")
        status = EXIT_USAGE
    except click.ClickException as exc:
        exc.show()
        status = exc.exit_code
    except InputError as exc:  # raised outside a command (the group converts those it sees)
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
        status = say_internal_error(exc)
    sys.exit(status if isinstance(status, int) else 0)


__all__ = ["cli", "main"]
