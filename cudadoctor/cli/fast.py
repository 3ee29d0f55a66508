"""The fast path: `check`, `recommend` and `fleet` command lines run without importing click.

click costs about as much to import as the rest of a `check --json` (docs/performance.md), and
the common command lines need none of it: no help, no completion, no usage error. This module
reads such a command line itself, with the same options as the click commands (cli/check_cmd.py,
cli/recommend_cmd.py, cli/fleet_cmd.py) and the same values click would pass (the same parameter
names, defaults, tuples for repeatable options and for fleet's sources, floats for seconds), and
runs the same click-free body (cli/check_run.py, cli/recommend_run.py, cli/fleet_run.py) with the
same error handling as cli/group.py's ``main``.

It takes a command line only when it is sure click would take it the same way; anything else
(``--help``, ``--version``, shell completion, an option it does not know, a missing or empty
value, a value that starts with ``-``, a number out of range, ``--``, a bundled short option, an
argument to a command that takes none, ``-`` as fleet's standard input) returns None, and the
caller hands the command line to click, which answers as it always has. tests/test_fast_path.py
holds this to click: the same parameters for a corpus of command lines, and the same stdout,
stderr and exit status when both run them."""

from __future__ import annotations

import os
import sys

from ..model.topology import MAX_GPUS_PER_JOB
from .errors import EXIT_FAIL, EXIT_USAGE, say_error, say_internal_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping, Optional, Sequence

# Option kinds (what click's type and callback make of the value).
FLAG = "flag"  # is_flag=True: True when given
TEXT = "text"  # a string, as given (no callback)
NON_EMPTY = "non-empty"  # a string that is not blank (options.non_empty)
MULTIPLE = "multiple"  # repeatable: a tuple of the strings, in order
SECONDS = "seconds"  # options.seconds_option: a number of seconds within [low, high]
COUNT = "count"  # click.IntRange(low, high)
CHOICE = "choice"  # click.Choice: one of the given words, exactly


class Option:
    """One option as the click command declares it: its names, parameter name, kind and default."""

    __slots__ = ("names", "dest", "kind", "default", "low", "high", "choices")

    def __init__(
        self, names: tuple[str, ...], dest: str, kind: str, default: Any = None,
        low: float = 0, high: float = 0, choices: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.names, self.dest, self.kind, self.default = names, dest, kind, default
        self.low, self.high, self.choices = low, high, choices

    def initial(self) -> Any:
        return False if self.kind == FLAG else () if self.kind == MULTIPLE else self.default


def _options(*rows: Option) -> dict[str, Option]:
    return {name: row for row in rows for name in row.names}


# The options both commands share (cli/options.py's groups).
_HOST = (
    Option(("--snapshot",), "snapshot", NON_EMPTY),
    Option(("--driver",), "driver", NON_EMPTY),
    Option(("--forward-compat",), "forward_compat", NON_EMPTY),
    Option(("--gpu",), "gpus", MULTIPLE),
)
_TARGET = (Option(("--torch",), "torch_release", NON_EMPTY), Option(("--family",), "family", NON_EMPTY))
_TABLE = (
    Option(("--table",), "table_path", NON_EMPTY),
    Option(("--families",), "families_path", NON_EMPTY),
    Option(("--config",), "config_path", NON_EMPTY),
)
_NVML = (Option(("--nvml-timeout",), "nvml_timeout", SECONDS, 10.0, 0.1, 600),)

CHECK_OPTIONS = _options(
    *_HOST,
    *_TARGET,
    *_TABLE,
    *_NVML,
    Option(("--variant",), "variant", NON_EMPTY),
    Option(("--json",), "as_json", FLAG),
    Option(("--strict",), "strict", FLAG),
    Option(("--min-memory",), "min_memory", TEXT),
    Option(("--gpus-per-job",), "gpus_per_job", COUNT, None, 1, MAX_GPUS_PER_JOB),
    Option(("--topology",), "topology", NON_EMPTY),
    Option(("--torch-runtime",), "torch_runtime", FLAG),
    Option(("--image",), "image", TEXT),
    Option(("--pull",), "pull", FLAG),
    Option(("--require",), "requires", MULTIPLE),
    Option(("--smoke",), "smoke", FLAG),
    Option(("--docker",), "docker", FLAG),
    Option(("--smoke-timeout",), "smoke_timeout", SECONDS, 180.0, 1, 86400),
    Option(("--pull-timeout",), "pull_timeout", SECONDS, 1800.0, 1, 86400),
    Option(("--timeout",), "timeout", SECONDS, 5.0, 0.1, 600),
    Option(("--run",), "run_line", TEXT),
    Option(("-q", "--quiet"), "quiet", FLAG),
    Option(("-v", "--verbose"), "verbose", FLAG),
)

RECOMMEND_OPTIONS = _options(
    Option(("--image",), "want_image", FLAG),
    Option(("--wheel",), "want_wheel", FLAG),
    *_HOST,
    *_TARGET,
    *_TABLE,
    *_NVML,
    Option(("--format",), "fmt", CHOICE, "text", choices=("text", "json", "tag", "index-url")),
)

FLEET_OPTIONS = _options(
    *_TARGET,
    Option(("--variant",), "variant", NON_EMPTY),
    Option(("--image",), "image", NON_EMPTY),
    *_TABLE,
    Option(("--kubernetes",), "live", FLAG),
    Option(("--context",), "context", NON_EMPTY),
    Option(("--selector",), "selector", NON_EMPTY),
    Option(("--timeout",), "timeout", SECONDS, 10.0, 0.1, 600),
    Option(("--format",), "output_format", CHOICE, "report", choices=("report", "node-affinity", "prometheus", "html")),
    Option(("--matrix",), "matrix", FLAG),
    Option(("--plan",), "plan", FLAG),
    Option(("--json",), "as_json", FLAG),
)

COMMAND_OPTIONS: Mapping[str, Mapping[str, Option]] = {"check": CHECK_OPTIONS, "recommend": RECOMMEND_OPTIONS, "fleet": FLEET_OPTIONS}
# A command's arguments (click.argument, nargs=-1): the parameter they are passed as, a tuple.
COMMAND_ARGUMENTS: Mapping[str, str] = {"fleet": "sources"}


def _value(option: Option, text: str) -> Any:
    """The value click would pass for ``text``; _NotMine when click might answer otherwise."""
    kind = option.kind
    if kind == TEXT or kind == MULTIPLE:
        return text
    if kind == NON_EMPTY:
        return text if text.strip() else _NOT_MINE
    if kind == SECONDS:
        from ..model.numbers import NumberError, parse_seconds

        try:
            return parse_seconds(text, option.names[0], low=option.low, high=option.high)
        except NumberError:
            return _NOT_MINE
    if kind == COUNT:
        if not (0 < len(text) <= 2 and text.isascii() and text.isdigit()):
            return _NOT_MINE
        number = int(text)
        return number if option.low <= number <= option.high else _NOT_MINE
    if kind == CHOICE:
        return text if text in option.choices else _NOT_MINE
    return _NOT_MINE


_NOT_MINE: Any = object()


def parse(argv: Sequence[str]) -> Optional[tuple[str, dict[str, Any]]]:
    """(the command, its parameters as click would pass them), or None: a command line for click."""
    if not argv or os.environ.get("_CUDADOCTOR_COMPLETE"):
        return None
    command, args = argv[0], list(argv[1:])
    spec = COMMAND_OPTIONS.get(command)
    if spec is None:
        return None
    params: dict[str, Any] = {}
    arguments = COMMAND_ARGUMENTS.get(command)
    if arguments is not None:
        params[arguments] = ()
    for row in spec.values():
        params[row.dest] = row.initial()
    texts: dict[str, str] = {}  # the last text of each option that takes one (click: the last wins)
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if isinstance(token, str) and arguments is not None and token and not token.startswith("-"):
            params[arguments] = params[arguments] + (token,)
            continue
        if not isinstance(token, str) or not token.startswith("-") or token == "-" or token == "--":
            return None  # an argument the command takes none of, `-` or `--`: click's to judge
        name, equals, given = token.partition("=") if token.startswith("--") else (token, "", "")
        option = spec.get(name)
        if option is None:
            return None
        if option.kind == FLAG:
            if equals:
                return None  # click: "option does not take a value"
            params[option.dest] = True
            continue
        if not equals:
            if i >= len(args):
                return None  # click: "requires an argument"
            given = args[i]
            i += 1
            if not isinstance(given, str) or given.startswith("-"):
                return None  # click takes it as the value; whether the user meant that is click's to say
        if option.kind == MULTIPLE:
            params[option.dest] = params[option.dest] + (given,)
        else:
            texts[option.dest] = given
    by_dest = {row.dest: row for row in spec.values()}
    for dest, text in texts.items():
        value = _value(by_dest[dest], text)
        if value is _NOT_MINE:
            return None
        params[dest] = value
    return command, params


def _runner(command: str) -> Callable[[Mapping[str, Any]], int]:
    if command == "check":
        from .check_run import run_check

        return run_check
    if command == "fleet":
        from .fleet_run import run_fleet

        return run_fleet
    from .recommend_run import run_recommend

    return run_recommend


def run(argv: Sequence[str], process: bool = False) -> Optional[int]:
    """Run the command line on the fast path and return its exit status; None (nothing done) when
    it is one for click. Every outcome is cli/group.py main's for the same command line."""
    parsed = parse(argv)
    if parsed is None:
        return None
    # As cli/group.py main does for a process: SIGINT, SIGTERM and SIGHUP kill the probe children and
    # leave through the clean-up (probe/watchdog.py). Only when this is the process's own command.
    if process:
        from ..probe.watchdog import exit_on_signals

        exit_on_signals()
    from ..report.console import prepare_streams

    command, params = parsed
    prepare_streams()
    from .errors import InputError, UsageProblem, usage_line

    try:
        return _runner(command)(params)
    except UsageProblem as exc:  # as click says its usage errors (cli/group.py main)
        say_error(usage_line(command, str(exc)))
        return EXIT_USAGE
    except InputError as exc:
        exc.show()
        return exc.exit_code
    except (KeyboardInterrupt, EOFError):
        try:  # as click does: a blank line closes the terminal's ^C echo, then "aborted"
            sys.stderr.write("\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        say_error("aborted")
        return 130
    except BrokenPipeError:
        return EXIT_FAIL
    except Exception as exc:  # a bug: one line, as the click path says it
        return say_internal_error(exc)
