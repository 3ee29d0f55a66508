"""A what-if that replaces every NVML fact (--driver and --gpu) asks NVML nothing; what the
command says is the same as when NVML is asked and its answer replaced (the old way), on a host
whose NVML reports GPUs, NVLink and a fabric."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import nvml_stub
from helpers import REPO_ROOT, cli_environment

ASKING = """
import sys
from cudadoctor.app import inputs
inputs.nvml_replaced = lambda driver, gpus: False  # ask NVML and replace its answer, as before
from cudadoctor.cli.fast import run
status = run(sys.argv[1:])
assert "cudadoctor.probe.nvml" in sys.modules  # NVML was asked
sys.exit(status)
"""


def said(code: list[str], argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, *code, *argv], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, re.sub(r'"probed_at": "[^"]*"', "", done.stdout), done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--json", "--driver", "550.54.15", "--gpu", "H100"],
        ["check", "--json", "--driver", "550.54.15", "--gpu", "H100", "--gpu", "H100", "--gpus-per-job", "2"],
        ["check", "-v", "--driver", "535.104.05", "--gpu", "T4", "--forward-compat", "12.8"],
        ["recommend", "--format", "json", "--driver", "535.104.05", "--gpu", "A100"],
    ],
    ids=" ".join,
)
def test_a_full_what_if_says_the_same_with_nvml_asked_or_not(argv: list[str], fake_nvml_env) -> None:
    env = cli_environment({**fake_nvml_env(nvml_stub.hgx_config()), "COLUMNS": "100"})
    skipped = said(["-m", "cudadoctor"], argv, env)
    asked = said(["-c", ASKING], argv, env)
    assert skipped[0] in (0, 1), skipped[2]
    assert skipped == asked
