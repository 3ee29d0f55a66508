"""The package as a user gets it: a wheel installed into a fresh virtual environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from helpers import REPO_ROOT


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    work = tmp_path_factory.mktemp("install")
    wheels = work / "wheels"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO_ROOT)],
        capture_output=True,
        text=True,
    )
    if build.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{build.stderr[-2000:]}")
    wheel = next(wheels.glob("cudadoctor-*.whl"))
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True)
    if install.returncode != 0:
        pytest.fail(f"installing the wheel failed:\n{install.stderr[-2000:]}")
    return wheel, env_dir


def test_wheel_ships_the_table(installed):
    wheel, _ = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert "cudadoctor/data/compat_table.json" in names
    assert not any(name.startswith("tests/") for name in names)


def test_wheel_ships_the_schemas_and_py_typed(installed):
    wheel, env_dir = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert "cudadoctor/py.typed" in names
    assert any(name.endswith("LICENSE") and ".dist-info/" in name for name in names)
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: MIT" in metadata or "License: MIT" in metadata
    assert "Classifier: Programming Language :: Python :: 3.10" in metadata
    for name in ("check", "probe", "recommend", "table"):
        assert f"cudadoctor/schemas/{name}.schema.json" in names
    run = subprocess.run([str(env_dir / "bin" / "cudadoctor"), "schema", "check"], capture_output=True, text=True)
    assert run.returncode == 0 and json.loads(run.stdout)["title"] == "cudadoctor check --json"


def test_console_script_runs_from_another_directory(installed, tmp_path):
    _, env_dir = installed
    env = {k: v for k, v in os.environ.items() if k not in ("CUDADOCTOR_TABLE", "PYTHONPATH")}
    run = subprocess.run(
        [str(env_dir / "bin" / "cudadoctor"), "check", "--json", "--driver", "550.54.15", "--gpu", "H100", "--torch", "2.5"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["recommendation"]["image"] == "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    assert Path(data["table"]["path"]).parts[-3:] == ("cudadoctor", "data", "compat_table.json")
    assert str(env_dir) in data["table"]["path"]


def test_torch_is_not_a_runtime_dependency(installed):
    _, env_dir = installed
    run = subprocess.run([str(env_dir / "bin" / "python"), "-c", "import torch"], capture_output=True, text=True)
    assert run.returncode != 0
