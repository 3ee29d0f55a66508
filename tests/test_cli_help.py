"""Help and the bare command: what a new user types first."""

from __future__ import annotations

import re

from helpers import run_cli

from cudadoctor.cli import COMMANDS, cli
from cudadoctor.cli.help import command_summary


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_a_bare_cudadoctor_prints_the_help_and_succeeds() -> None:
    run = run_cli()
    assert run.exit_code == 0 and run.stderr == ""
    assert run.stdout.startswith("Usage: cudadoctor") and "Commands:" in run.stdout


def test_the_top_level_help_shows_each_whole_summary() -> None:
    text = squash(run_cli("--help", env={"COLUMNS": "80"}).stdout)
    for name in COMMANDS:
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None
        summary = command_summary(command)
        assert len(summary) > 20 and not summary.endswith("...")
        assert f"{name} {summary}" in text, summary


def test_check_help_groups_its_options_and_ends_with_examples() -> None:
    text = run_cli("check", "--help", env={"COLUMNS": "100"}).stdout
    headings = [line[:-1] for line in text.splitlines() if line.endswith(":") and not line.startswith(" ")]
    expected = [
        "Target (what the host is judged for)",
        "Host (what-if: plan for another machine)",
        "Containers",
        "Output",
        "Table and team defaults",
    ]
    # In this order; "Other options" (options no section names yet) may follow; Examples come last.
    assert headings[: len(expected)] == expected and headings[-1] == "Examples", headings
    assert text.rstrip().splitlines()[-1].strip().startswith("cudadoctor check ")
    for option in ("--torch", "--driver", "--image", "--json", "--quiet", "--verbose", "--config", "--smoke"):
        assert len(re.findall(rf"^\s+(-\w, )?{option}(?![\w-])", text, flags=re.M)) == 1, option


def test_the_examples_in_check_help_are_valid_command_lines() -> None:
    text = run_cli("check", "--help").stdout
    examples = [line.strip() for line in text.split("Examples:")[1].splitlines() if line.strip().startswith("cudadoctor ")]
    assert len(examples) >= 4
    for line in examples:
        args = line.split()[1:]
        if "--image" in args or ">" in args:
            continue  # needs Docker / a redirect; its options are checked by the parser below
        run = run_cli(*args, "--quiet") if "--snapshot" not in args else None
        if run is not None:
            assert run.exit_code in (0, 1), (line, run.stderr)


def test_shell_completion_script_is_printed() -> None:
    run = run_cli(env={"_CUDADOCTOR_COMPLETE": "bash_source"})
    assert run.exit_code == 0
    assert "_CUDADOCTOR_COMPLETE" in run.stdout and "complete " in run.stdout
