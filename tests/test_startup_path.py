"""What a command loads before it answers: the what-if that replaces every NVML fact asks no NVML
at all, and `check --json`'s path imports no front end it does not use."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import HOSTS, REPO_ROOT, cli_environment

WHAT_IF = ("--driver", "535.104.05", "--gpu", "T4")


def loader_log(args: tuple[str, ...], env: dict[str, str], directory: Path) -> tuple[int, dict[int, list[str]], "subprocess.CompletedProcess[str]"]:
    """Run `python -m cudadoctor ARGS` with the dynamic loader logging every library each of its
    processes (the forked NVML child too) loads: (the command's pid, lines per pid, the run)."""
    directory.mkdir()
    log_env = cli_environment({**env, "LD_DEBUG": "files", "LD_DEBUG_OUTPUT": str(directory / "ld")})
    proc = subprocess.Popen(
        [sys.executable, "-m", "cudadoctor", *args], cwd=REPO_ROOT, env=log_env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    out, err = proc.communicate(timeout=120)
    lines: dict[int, list[str]] = {}
    for path in directory.iterdir():
        for line in path.read_text(errors="replace").splitlines():
            found = re.match(r"\s*(\d+):\s*(.*)", line)
            if found:
                lines.setdefault(int(found.group(1)), []).append(found.group(2))
    return proc.pid, lines, subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def nvml_loaders(lines: dict[int, list[str]]) -> set[int]:
    return {pid for pid, text in lines.items() if any("file=libnvidia-ml.so.1" in line for line in text)}


def test_driver_and_gpu_together_ask_nvml_nothing_in_any_process(fake_nvml_env, tmp_path: Path) -> None:
    env = fake_nvml_env({"count": 8})
    pid, lines, run = loader_log(("check", "--json", *WHAT_IF), env, tmp_path / "what-if")
    assert run.returncode in (0, 1), run.stderr
    assert pid in lines  # the log is written: the loader saw the command start
    assert nvml_loaders(lines) == set()
    # No NVML child: the one other process is libcuda's watched child (probe/libcuda.py), which
    # loads libcuda and nothing of NVML's.
    others = {other: text for other, text in lines.items() if other != pid}
    assert len(others) <= 1
    assert all(any("file=libcuda.so.1" in line for line in text) for text in others.values())


@pytest.mark.parametrize("partial", [("--driver", "535.104.05"), ("--gpu", "T4"), ()])
def test_a_partial_what_if_still_reads_nvml_in_its_child(fake_nvml_env, tmp_path: Path, partial: tuple[str, ...]) -> None:
    env = fake_nvml_env({"count": 8})
    pid, lines, run = loader_log(("check", "--json", *partial), env, tmp_path / "partial")
    assert run.returncode in (0, 1), run.stderr
    loaders = nvml_loaders(lines)
    assert loaders and pid not in loaders  # the forked child loads NVML; the command itself never does
    # and asks libcuda first, in that same child: the command forks no other
    others = {other: text for other, text in lines.items() if other != pid}
    assert set(others) == loaders and len(loaders) == 1
    assert any("file=libcuda.so.1" in line for line in others[next(iter(loaders))])


def test_a_full_what_if_reports_the_driver_and_gpus_it_was_given(fake_nvml_env) -> None:
    """With NVML not asked, the host's driver and GPUs are the what-if's own (that the report is the
    same as with NVML asked is tests/test_whatif_without_nvml.py's)."""
    import json

    env = fake_nvml_env({"count": 8})
    run = subprocess.run(
        [sys.executable, "-m", "cudadoctor", "check", "--json", *WHAT_IF], cwd=REPO_ROOT,
        env=cli_environment(env), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    host = json.loads(run.stdout)["host"]
    assert host["driver"]["source"] == "what-if" and host["driver"]["driver_version"] == "535.104.05"
    assert [(g["name"], g["source"]) for g in host["gpus"]] == [("T4", "what-if")]


# ---- what `check --json` imports -------------------------------------------------------------------

# Front ends and probes a `check --json` must not load in its own process: click (the fast path
# reads its command line), rich (the JSON needs no console), nvidia-ml-py (only NVML's forked
# child imports it, and a full what-if starts no child), docker (no container was asked about).
NOT_ON_THE_CHECK_PATH = {"click", "rich", "pynvml", "docker", "torch", "jsonschema", "urllib", "http", "socket"}
# Nor, in a check, the standard modules whose import costs more than their work there: datetime
# (model/dates.py counts the table's age), json (report/json_text.py writes the document; the
# table is loaded precompiled) and typing (its names are imported for type checkers only:
# `TYPE_CHECKING = False` in each module; a snapshot being read imports it). A fleet imports
# datetime and typing with msgspec, and reads JSON.
COSTLY_STANDARD_MODULES = {"datetime", "json", "typing"}


def imported_modules(args: tuple[str, ...], env: dict[str, str]) -> list[str]:
    """Every module `python -X importtime -m cudadoctor ARGS` imports in its own process, in order."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "cudadoctor", *args], cwd=REPO_ROOT,
        env=cli_environment(env), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode in (0, 1), run.stderr[-2000:]
    assert run.stdout.startswith("{")
    return [line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines() if line.startswith("import time:") and "|" in line][1:]


def test_a_full_what_if_check_imports_no_front_end_no_nvml_and_no_docker(fake_nvml_env) -> None:
    env = fake_nvml_env({"count": 8})
    first = imported_modules(("check", "--json", *WHAT_IF), env)
    assert "cudadoctor.compat.validate" in first  # this test's cache is empty: the table is validated once
    modules = imported_modules(("check", "--json", *WHAT_IF), env)
    loaded = {name.split(".")[0] for name in modules}
    shunned = NOT_ON_THE_CHECK_PATH | COSTLY_STANDARD_MODULES
    assert loaded & shunned == set(), sorted(m for m in modules if m.split(".")[0] in shunned)
    ours = [m for m in modules if m.startswith("cudadoctor")]
    assert "cudadoctor.cli.fast" in ours and "cudadoctor.cli.check_run" in ours
    for absent in ("cudadoctor.cli.group", "cudadoctor.cli.check_cmd", "cudadoctor.probe.nvml", "cudadoctor.compat.validate"):
        assert absent not in ours, ours


def test_a_probing_check_imports_nvidia_ml_py_only_in_its_child(fake_nvml_env) -> None:
    env = fake_nvml_env({"count": 8})
    imported_modules(("check", "--json"), env)  # the first run of this test's cache validates the table
    modules = imported_modules(("check", "--json"), env)
    loaded = {name.split(".")[0] for name in modules}
    assert loaded & (NOT_ON_THE_CHECK_PATH | COSTLY_STANDARD_MODULES) == set()
    assert "cudadoctor.probe.nvml" in modules  # the watchdog that forks the child


def test_a_fleet_report_as_json_imports_no_front_end(fake_nvml_env) -> None:
    modules = imported_modules(("fleet", "--json", str(HOSTS)), fake_nvml_env())
    loaded = {name.split(".")[0] for name in modules}
    assert loaded & NOT_ON_THE_CHECK_PATH == set(), sorted(m for m in modules if m.split(".")[0] in NOT_ON_THE_CHECK_PATH)
    assert "cudadoctor.cli.fleet_run" in modules and "cudadoctor.cli.fleet_cmd" not in modules


def test_the_import_list_sees_click_where_the_click_path_runs(fake_nvml_env) -> None:
    """The listing above is real: a command line the fast path leaves to click imports click."""
    modules = imported_modules(("check", "--json", "--driver=535.104.05", "--gpu", "T4", "--gpus-per-job", "064"), fake_nvml_env())
    assert "click" in modules and "cudadoctor.cli.group" in modules


NVML_CHILD_IMPORTS = """
import json, sys
from cudadoctor.probe.nvml import probe_nvml
before = set(sys.modules)
driver, gpus = probe_nvml()
added = sorted(set(sys.modules) - before)
import ctypes.util
print(json.dumps({"state": driver.nvml_state, "gpus": len(gpus), "added": added,
                  "real_util": hasattr(ctypes.util, "find_loaded_library") or hasattr(ctypes.util, "test"),
                  "libc": ctypes.util.find_library("c")}))
"""


def test_the_nvml_probe_imports_nvidia_ml_py_without_what_it_never_uses(fake_nvml_env) -> None:
    """nvidia-ml-py imports ctypes.util (and through it shutil, subprocess, tempfile) for a
    function it never calls; the probe's child reads every GPU without them, and a later import
    of ctypes.util is the real module."""
    import json

    run = subprocess.run(
        [sys.executable, "-c", NVML_CHILD_IMPORTS], cwd=REPO_ROOT, env=cli_environment(fake_nvml_env({"count": 8})),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    assert (found["state"], found["gpus"]) == ("ok", 8)
    assert "pynvml" in found["added"]
    assert not {"ctypes.util", "subprocess", "shutil", "tempfile"} & set(found["added"]), found["added"]
    assert found["real_util"] and found["libc"]


def _python(code: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


def test_a_fleet_imports_msgspec_without_typing_extensions_which_stays_importable() -> None:
    run = _python(
        "import sys\n"
        "from cudadoctor.cli.fleet_run import import_msgspec_lean\n"
        "import_msgspec_lean()\n"
        "lean = 'msgspec' in sys.modules and 'typing_extensions' not in sys.modules and 'inspect' not in sys.modules\n"
        "from cudadoctor.fleet import node_fields\n"
        "listed = node_fields.decode_node_list(b'{\"kind\": \"List\", \"items\": [{\"metadata\": {\"name\": \"n1\"}}]}')\n"
        "import typing_extensions\n"
        "print(lean, listed.items[0].metadata.name, typing_extensions.__name__)\n"
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "n1", "typing_extensions"]


def test_a_process_that_holds_typing_extensions_imports_msgspec_as_it_is() -> None:
    run = _python(
        "import typing_extensions\n"
        "from cudadoctor.cli.fleet_run import import_msgspec_lean\n"
        "import_msgspec_lean()\n"
        "import msgspec._utils as u\n"
        "print(u._get_type_hints is typing_extensions.get_type_hints)\n"
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True"]
