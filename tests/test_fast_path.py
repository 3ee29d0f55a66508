"""The fast path (cudadoctor/cli/fast.py) runs `check`, `recommend` and `fleet` without click, and answers
every command line exactly as the click commands do: the same parameters, or none (click's
turn); and the same stdout, stderr and exit status when a command line is run both ways."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any, Optional

import click
import pytest

from cudadoctor.cli import fast
from cudadoctor.cli.check_cmd import check
from cudadoctor.cli.fleet_cmd import fleet
from cudadoctor.cli.recommend_cmd import recommend

from helpers import HOSTS, REPO_ROOT, cli_environment, host

CLICK_COMMANDS = {"check": check, "recommend": recommend, "fleet": fleet}
H100 = host("h100-550")
T4 = host("t4-470")

# Command lines the fast path must take itself (and give click's parameters for).
TAKEN = [
    ["check", "--json"],
    ["check"],
    ["check", "-q"],
    ["check", "--verbose", "--strict"],
    ["check", "--json", "--driver", "535.104.05", "--gpu", "T4"],
    ["check", "--json", "--driver=550.54.15", "--gpu=8.0", "--gpu", "H100"],
    ["check", "--snapshot", H100, "--torch", "2.8", "--json"],
    ["check", "--snapshot", H100, "--variant", "cu126", "--family", "pytorch"],
    ["check", "--nvml-timeout", "2.5", "--json"],
    ["check", "--nvml-timeout", " 30 ", "--timeout", ".5", "--pull-timeout", "60", "--smoke-timeout", "1"],
    ["check", "--gpus-per-job", "8", "--json"],
    ["check", "--gpus-per-job", "08"],
    ["check", "--min-memory", "16GiB", "--require", "cuda>=12.8", "--require", "brand=tesla"],
    ["check", "--image", "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime", "--docker"],
    ["check", "--image", ""],
    ["check", "--min-memory="],
    ["check", "--json", "--json"],
    ["check", "--torch", "2.7", "--torch", "2.8"],
    ["check", "-q", "-v"],
    ["check", "--table", "t.json", "--families", "f.toml", "--config", "c.toml", "--forward-compat", "12.8"],
    ["check", "--topology", "topo.json", "--torch-runtime", "--run", "docker run --gpus all img"],
    ["check", "--pull", "--smoke"],
    ["recommend"],
    ["recommend", "--image", "--format", "tag"],
    ["recommend", "--wheel", "--format=index-url"],
    ["recommend", "--image", "--wheel"],
    ["recommend", "--format", "json", "--snapshot", T4, "--torch", "2.8"],
    ["recommend", "--driver", "535.104.05", "--gpu", "T4", "--nvml-timeout", "600"],
    ["fleet"],
    ["fleet", "--json", "nodes.json"],
    ["fleet", "a.json", "dir", "--torch", "2.8", "b.json"],
    ["fleet", "--format", "html", "nodes.json"],
    ["fleet", "--format=node-affinity", "--json", "--image", "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime", "x"],
    ["fleet", "--kubernetes", "--context", "prod", "--selector", "nvidia.com/gpu.present=true", "--timeout", "2.5"],
    ["fleet", "--matrix", "--plan", "--family", "pytorch", "--variant", "cu126", "--table", "t.json", "d"],
    ["fleet", "--context", "prod", "nodes.json"],
]

# Command lines the fast path must leave to click (help, completion, usage errors, anything unsure).
LEFT = [
    [],
    ["--version"],
    ["--help"],
    ["check", "--help"],
    ["check", "-h"],
    ["recommend", "--help"],
    ["probe", "--json"],
    ["fleet", "-"],
    ["fleet", "a.json", "-"],
    ["fleet", "--help"],
    ["fleet", "--", "a.json"],
    ["fleet", "--format", "xml", "a.json"],
    ["fleet", "--image", "", "a.json"],
    ["fleet", "--timeout", "0", "a.json"],
    ["fleet", "", "a.json"],
    ["fleet", "--gpu", "T4", "a.json"],
    ["table"],
    ["check", "--bogus"],
    ["check", "--jso"],
    ["check", "extra"],
    ["check", "--", "--json"],
    ["check", "-"],
    ["check", "-qv"],
    ["check", "--json=1"],
    ["check", "--driver"],
    ["check", "--driver", ""],
    ["check", "--driver", "  "],
    ["check", "--driver=", "--json"],
    ["check", "--driver", "--json"],
    ["check", "--gpu", "-1"],
    ["check", "--nvml-timeout", "0"],
    ["check", "--nvml-timeout", "601"],
    ["check", "--nvml-timeout", "nan"],
    ["check", "--nvml-timeout", "1e1"],
    ["check", "--nvml-timeout", "-5"],
    ["check", "--nvml-timeout", "٣"],
    ["check", "--timeout", "0.05"],
    ["check", "--gpus-per-job", "0"],
    ["check", "--gpus-per-job", "65"],
    ["check", "--gpus-per-job", "2.0"],
    ["check", "--gpus-per-job", "+2"],
    ["check", "--format", "tag"],
    ["recommend", "--format", "TAG"],
    ["recommend", "--format", "xml"],
    ["recommend", "--json"],
    ["recommend", "--variant", "cu126"],
    ["check", "--torch", ""],
]


def click_params(argv: list[str]) -> Optional[dict[str, Any]]:
    """What click passes the command for argv; None where click refuses it (or it is not a
    `check`/`recommend` command line, or asks for help)."""
    if not argv or argv[0] not in CLICK_COMMANDS:
        return None
    command = CLICK_COMMANDS[argv[0]]
    try:
        with command.make_context(argv[0], list(argv[1:])) as ctx:
            return dict(ctx.params)
    except (click.ClickException, click.exceptions.Exit):
        return None


def test_the_fast_path_knows_every_option_of_the_click_commands_and_nothing_else() -> None:
    for name, command in CLICK_COMMANDS.items():
        spec = fast.COMMAND_OPTIONS[name]
        declared = {}
        for param in command.params:
            if not isinstance(param, click.Option) or param.name == "help":
                continue
            for opt in param.opts:
                declared[opt] = (param.name, param.is_flag, param.multiple)
        mine = {opt: (row.dest, row.kind == fast.FLAG, row.kind == fast.MULTIPLE) for opt, row in spec.items()}
        assert mine == declared, name
        defaults = click_params([name])
        assert defaults is not None
        assert fast.parse([name]) == (name, defaults)


@pytest.mark.parametrize("argv", TAKEN, ids=" ".join)
def test_the_fast_path_takes_a_common_command_line_with_clicks_parameters(argv: list[str]) -> None:
    expected = click_params(argv)
    assert expected is not None, "click refuses this command line: it belongs in LEFT"
    parsed = fast.parse(argv)
    assert parsed is not None
    command, params = parsed
    assert command == argv[0]
    assert params == expected
    assert {k: type(v) for k, v in params.items()} == {k: type(v) for k, v in expected.items()}


@pytest.mark.parametrize("argv", LEFT, ids=lambda a: " ".join(a) or "(none)")
def test_the_fast_path_leaves_help_errors_and_the_unsure_to_click(argv: list[str]) -> None:
    assert fast.parse(argv) is None


def test_shell_completion_goes_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_CUDADOCTOR_COMPLETE", "bash_complete")
    assert fast.parse(["check", "--json"]) is None


# ---- the same command line, run both ways ---------------------------------------------------------

CLICK_MAIN = "import sys\nfrom cudadoctor.cli.group import main\nmain(sys.argv[1:])\n"

RUN_BOTH = [
    ["check", "--snapshot", H100, "--json"],
    ["check", "--snapshot", H100],
    ["check", "--snapshot", T4, "-v"],
    ["check", "--snapshot", T4, "-q", "--strict"],
    ["check", "--snapshot", H100, "--torch", "2.8", "--variant", "cu118", "--json"],
    ["check", "--snapshot", H100, "--torch", "9.9"],
    ["check", "--snapshot", H100, "--gpus-per-job", "4", "--min-memory", "100GiB", "--json"],
    ["check", "--snapshot", T4, "--driver", "535.104.05", "--gpu", "A100", "--gpu", "7.5"],
    ["check", "--driver", "535.104.05", "--gpu", "NoSuchGPU"],
    ["check", "--driver", "banana", "--gpu", "T4"],
    ["check", "-q", "-v"],
    ["check", "--pull"],
    ["check", "--snapshot", "/nonexistent/host.json"],
    ["check", "--snapshot", H100, "--table", "/nonexistent/table.json"],
    ["check", "--min-memory", "lots", "--snapshot", H100],
    ["check", "--driver", "", "--gpu", "T4"],
    ["check", "--nvml-timeout", "nan"],
    ["recommend", "--snapshot", H100, "--image", "--format", "tag"],
    ["recommend", "--snapshot", T4, "--wheel", "--format", "index-url"],
    ["recommend", "--snapshot", host("k80-470"), "--image", "--format", "tag"],
    ["recommend", "--snapshot", H100, "--format", "json"],
    ["recommend", "--image", "--wheel"],
    ["recommend", "--format", "tag", "--wheel"],
    ["recommend", "--driver", "535.104.05", "--gpu", "T4"],
    ["fleet", "--json", str(HOSTS)],
    ["fleet", str(HOSTS)],
    ["fleet", H100, T4, "--torch", "2.8", "--json"],
    ["fleet", "--matrix", "--plan", str(HOSTS)],
    ["fleet", "--format", "prometheus", str(HOSTS)],
    ["fleet", "--format", "node-affinity", str(HOSTS)],
    ["fleet"],
    ["fleet", "--context", "prod", H100],
    ["fleet", "--matrix", "--image", "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime", H100],
    ["fleet", "--format", "html", "--json", H100],
    ["fleet", "/nonexistent/nodes.json"],
    ["fleet", "--torch", "9.9", H100],
]


def run(code_or_module: list[str], argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, *code_or_module, *argv], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    # A probed host is stamped with the second it was probed: the one thing two runs may differ in.
    out = re.sub(r'"probed_at": "[^"]*"', '"probed_at": "-"', done.stdout)
    return done.returncode, out, done.stderr


@pytest.mark.parametrize("argv", RUN_BOTH, ids=" ".join)
def test_a_command_line_run_on_the_fast_path_and_by_click_says_the_same(argv: list[str], fake_nvml_env) -> None:
    env = cli_environment({**fake_nvml_env({"count": 8}), "COLUMNS": "100"})
    fast_run = run(["-m", "cudadoctor"], argv, env)
    click_run = run(["-c", CLICK_MAIN], argv, env)
    assert fast_run == click_run
    if fast_run[1].startswith("{"):
        json.loads(fast_run[1])
