"""Every JSON the CLI prints in the tests is validated against its published schema
(cudadoctor/schemas/<command>.schema.json, JSON Schema draft 2020-12, with the `jsonschema` library).

conftest.py installs two hooks for every test:

- in-process runs (click's runner, tests/helpers.invoke): each command module's ``emit_json`` is
  wrapped, so the document is validated before it is printed;
- runs in a child process (``python -m cudadoctor ...`` or the console script, through
  ``subprocess.run``: tests/helpers.run_cli, tests/scenario.run_check and the tests' own calls):
  stdout that parses as JSON is validated against the schema of the command that printed it, and
  so is the snapshot `probe --output FILE` writes.

A command without a schema file is not validated here (tests/test_schemas.py requires one for each
command that prints JSON).
"""

from __future__ import annotations

import json
import os
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

import jsonschema

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "cudadoctor" / "schemas"


class Counter:
    """How many documents were validated (a test proves the hooks ran)."""

    validated = 0


@lru_cache(maxsize=None)
def validator(name: str) -> Optional[jsonschema.protocols.Validator]:
    path = SCHEMA_DIR / f"{name}.schema.json"
    if not path.is_file():
        return None
    schema = json.loads(path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate(name: str, document: Any) -> None:
    """Raise AssertionError naming the first place the document breaks the schema."""
    checker = validator(name)
    if checker is None:
        return
    errors = sorted(checker.iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = "$" + "".join(f"[{p!r}]" for p in error.absolute_path)
        raise AssertionError(f"`cudadoctor {name}` JSON breaks {name}.schema.json at {where}: {error.message}")
    Counter.validated += 1


def command_of(argv: Sequence[Any]) -> Optional[tuple[str, list[str]]]:
    """(command, its arguments) when argv runs cudadoctor, else None."""
    args = [str(a) for a in argv]
    start = None
    for i, arg in enumerate(args):
        if arg == "-m" and i + 1 < len(args) and args[i + 1] == "cudadoctor":
            start = i + 2
            break
    if start is None and args and os.path.basename(args[0]) == "cudadoctor":
        start = 1
    if start is None:
        return None
    rest = args[start:]
    for i, arg in enumerate(rest):
        if not arg.startswith("-"):
            return arg, rest[i + 1 :]
    return None


def schema_name(command: str, args: Sequence[str]) -> str:
    """The schema of what a command line prints: a subcommand or an output format may have its own."""
    if command == "table" and args[:1] == ["update"]:
        return "table_update"
    if command == "table" and args[:1] == ["learn"]:
        return "table_learn"
    if command == "fleet" and "node-affinity" in args:
        return "node-affinity"
    return command


def check_completed(argv: Sequence[Any], result: "subprocess.CompletedProcess[Any]", cwd: Any = None) -> None:
    found = command_of(argv)
    if found is None:
        return
    command, args = found
    command = schema_name(command, args)
    out = result.stdout
    if isinstance(out, bytes):
        out = out.decode("utf-8", "replace")
    if isinstance(out, str) and out.strip()[:1] in ("{", "["):
        try:
            document = json.loads(out)
        except ValueError:
            document = None
        if document is not None:
            validate(command, document)
    if command == "probe":
        for flag in ("--output", "-o"):
            if flag in args and args.index(flag) + 1 < len(args):
                target = Path(args[args.index(flag) + 1])
                if not target.is_absolute() and cwd is not None:
                    target = Path(cwd) / target
                if target.is_file():
                    validate("probe", json.loads(target.read_text(encoding="utf-8")))


def wrap_run(original: Any) -> Any:
    def run(*popenargs: Any, **kwargs: Any) -> Any:
        result = original(*popenargs, **kwargs)
        argv = popenargs[0] if popenargs else kwargs.get("args")
        if isinstance(argv, (list, tuple)):
            check_completed(argv, result, kwargs.get("cwd"))
        return result

    return run


def wrap_emit(command: str, original: Any) -> Any:
    def emit_json(data: Any) -> None:
        import click

        # In-process runs: the running click command says which subcommand or format printed this.
        ctx = click.get_current_context(silent=True)
        args: list[str] = []
        if ctx is not None:
            args = ctx.command_path.split()[2:]
            if ctx.params.get("output_format") == "node-affinity":
                args.append("node-affinity")
        validate(schema_name(command, args), json.loads(json.dumps(data)))  # as a reader sees it (tuples -> lists)
        original(data)

    return emit_json
