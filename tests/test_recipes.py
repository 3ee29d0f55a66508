"""Every recipe in docs/recipes/ (and the README's setup lines) runs as written: the shell blocks
under `bash` with `set -euo pipefail`, the GitHub Actions step's `run:` script, the Dockerfile
`plan` stage built by a real private Docker daemon (offline), and the pre-flight step with the
real jq. Commands that would reach the network (`pip install`) are replaced by a stand-in on PATH
that records its arguments."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import io
from pathlib import Path

import pytest

import docker_daemon
from helpers import REPO_ROOT, host

RECIPES = REPO_ROOT / "docs" / "recipes"
BIN = Path(sys.executable).parent  # the cudadoctor console script lives beside this Python


def blocks(name: str, language: str) -> list[str]:
    text = (RECIPES / name).read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


@pytest.fixture
def stand_ins(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """(environment, log): `pip` and `python -m pip` record their arguments in log instead of installing."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "pip.log"
    pip = bindir / "pip"
    pip.write_text(f'#!/bin/bash\necho "pip $*" >> {log}\n')
    python = bindir / "python"
    python.write_text(
        f'#!/bin/bash\nif [ "${{1:-}}" = "-m" ] && [ "${{2:-}}" = "pip" ]; then shift 2; echo "pip $*" >> {log}; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    for script in (pip, python):
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{bindir}:{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    return env, log


def bash(script: str, env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    path = cwd / "script.sh"
    path.write_text(script)
    return subprocess.run(["bash", str(path), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


# --- setup script -----------------------------------------------------------------------------------


def test_setup_script_installs_the_wheel_that_fits(stand_ins, tmp_path: Path) -> None:
    env, log = stand_ins
    (script,) = blocks("setup-script.md", "bash")
    assert "set -euo pipefail" in script
    run = bash(script, {**env, "TORCH": "2.8"}, "--driver", "550.54.15", "--gpu", "H100", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    installed = log.read_text().strip().splitlines()
    assert len(installed) == 1 and re.fullmatch(r"pip install torch==2\.8\.\* --index-url https?://\S+/cu12[0-9]", installed[0]), installed


def test_setup_script_stops_before_pip_when_nothing_fits(stand_ins, tmp_path: Path) -> None:
    env, log = stand_ins
    (script,) = blocks("setup-script.md", "bash")
    run = bash(script, {**env, "TORCH": "2.8"}, "--driver", "470.82.01", "--gpu", "T4", cwd=tmp_path)
    assert run.returncode == 1
    assert not log.exists(), "pip ran although nothing fits"
    assert run.stdout.startswith("FAIL") and "PyTorch 2.7" in run.stdout  # the answer, and the release that fits


@pytest.mark.parametrize("flags", [("--image", "--format", "tag"), ("--wheel", "--format", "index-url")])
def test_nothing_fits_prints_nothing_and_stops_a_strict_script(stand_ins, tmp_path: Path, flags) -> None:
    env, _ = stand_ins
    line = " ".join(flags)
    for target, said in (((), "no NVIDIA driver was found"), (("--torch", "2.15"), "PyTorch 2.7 fits")):
        where = f'--snapshot {host("no-driver" if not target else "t4-470")} {" ".join(target)}'
        script = f'set -euo pipefail\nvalue="$(cudadoctor recommend {line} {where})"\necho "reached: [$value]"\n'
        run = bash(script, env, cwd=tmp_path)
        assert run.returncode == 1 and "reached" not in run.stdout
        direct = subprocess.run([str(BIN / "cudadoctor"), "recommend", *flags, *where.split()], capture_output=True, text=True)
        assert direct.returncode == 1 and direct.stdout == ""
        assert said in direct.stderr


def test_the_readme_setup_lines_are_safe_under_set_e(stand_ins, tmp_path: Path) -> None:
    """The README's script lines, run on a host where nothing fits: the script stops before docker."""
    env, _ = stand_ins
    readme = (REPO_ROOT / "README.md").read_text()
    (script,) = re.findall(r"In a setup script.*?```sh\n(.*?)```", readme, flags=re.S)
    assert "set -euo pipefail" in script
    bindir = tmp_path / "bin"
    docker = bindir / "docker"
    docker.write_text(f'#!/bin/bash\necho "docker $*" >> {tmp_path}/docker.log\n')
    docker.chmod(0o755)
    # The README runs on "this host"; here this host is one without an NVIDIA driver (nothing CUDA fits).
    wrapper = bindir / "cudadoctor"
    wrapper.write_text(f'#!/bin/bash\nexec {BIN / "cudadoctor"} "$@" --snapshot {host("no-driver")}\n')
    wrapper.chmod(0o755)
    run = bash(script, env, cwd=tmp_path)
    assert run.returncode == 1
    assert not (tmp_path / "docker.log").exists()


# --- GitHub Actions step ------------------------------------------------------------------------------


def actions_run_script() -> str:
    (step,) = blocks("github-actions.md", "yaml")
    lines = step.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "run: |")
    indent = len(lines[start + 1]) - len(lines[start + 1].lstrip())
    body = []
    for line in lines[start + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        body.append(line[indent:])
    return "\n".join(body) + "\n"


def test_the_actions_step_writes_its_outputs(stand_ins, tmp_path: Path) -> None:
    env, log = stand_ins
    script = actions_run_script()
    assert script.startswith("set -euo pipefail")
    outputs, summary = tmp_path / "output", tmp_path / "summary"
    step_env = {**env, "CLUSTER_DRIVER": "580.95.05", "CLUSTER_GPU": "A100", "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(summary)}
    run = bash(script, step_env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    values = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert values["image"].startswith("pytorch/pytorch:") and values["index_url"].startswith("http")
    assert log.read_text().strip() == "pip install cudadoctor"


def test_the_actions_step_fails_the_job_when_nothing_fits(stand_ins, tmp_path: Path) -> None:
    env, _ = stand_ins
    outputs = tmp_path / "output"
    # Driver 418 (CUDA 10.1) runs no PyTorch 2.x build at all.
    step_env = {**env, "CLUSTER_DRIVER": "418.39", "CLUSTER_GPU": "T4", "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(tmp_path / "s")}
    run = bash(actions_run_script(), step_env, cwd=tmp_path)
    assert run.returncode == 1
    assert not outputs.exists() or "image=" not in outputs.read_text()


# --- pre-flight with jq -----------------------------------------------------------------------------


@pytest.fixture
def jq() -> str:
    found = shutil.which("jq")
    if found is None:
        pytest.skip("jq is not installed (.ci/run installs it)")
    return found


def test_preflight_passes_and_prints_the_image(stand_ins, jq, tmp_path: Path) -> None:
    env, _ = stand_ins
    (script,) = blocks("preflight-jq.md", "bash")
    run = bash(script, env, "--torch", "2.11", "--snapshot", host("h100-550"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["verdict: warn", "pytorch/pytorch:2.11.0-cuda12.9-cudnn9-runtime"]
    json.loads((tmp_path / "preflight.json").read_text())


def test_preflight_names_the_failures_and_the_fixes(stand_ins, jq, tmp_path: Path) -> None:
    env, _ = stand_ins
    (script,) = blocks("preflight-jq.md", "bash")
    run = bash(script, env, "--torch", "2.11", "--snapshot", host("t4-470"), cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout.strip() == "verdict: fail"
    errors = run.stderr.splitlines()
    assert any(line.startswith("driver-too-old: Upgrade the NVIDIA driver") for line in errors), errors
    assert "fix: upgrade-driver 525.60.13" in errors and "fix: use-release pytorch/pytorch:2.7.1-cuda11.8-cudnn9-runtime" in errors


def test_preflight_passes_bad_input_through(stand_ins, jq, tmp_path: Path) -> None:
    env, _ = stand_ins
    (script,) = blocks("preflight-jq.md", "bash")
    run = bash(script, env, "--driver", "banana", cwd=tmp_path)
    assert run.returncode == 2 and "cudadoctor: error:" in run.stderr


# --- the Dockerfile plan stage, built by a real Docker daemon ---------------------------------------------


PLANNER = "cdtest/planner:1"


@pytest.fixture(scope="module")
def planner(docker_host, tmp_path_factory):
    import planner_image

    runs = [
        ["check", "--quiet", "--torch", "2.8", "--driver", "535.104.05", "--gpu", "A100"],
        ["check", "--quiet", "--torch", "2.8", "--driver", "470.82.01", "--gpu", "T4"],
        ["recommend", "--wheel", "--format", "index-url", "--torch", "2.8", "--driver", "535.104.05", "--gpu", "A100"],
        ["recommend", "--image", "--format", "tag", "--torch", "2.8", "--driver", "535.104.05", "--gpu", "A100"],
        ["recommend", "--format", "json", "--torch", "2.8", "--driver", "535.104.05", "--gpu", "A100"],
    ]
    planner_image.build_planner(docker_host, PLANNER, runs, tmp_path_factory.mktemp("planner"))
    return docker_host


def plan_stage() -> str:
    stage = blocks("dockerfile-plan.md", "dockerfile")[0]
    assert "FROM ${PLANNER} AS plan" in stage
    return stage


def build(host_address: str, dockerfile: str, buildargs: dict[str, str], tag: str):
    import docker

    archive = docker_daemon.build_context(dockerfile)
    client = docker.DockerClient(base_url=host_address, timeout=300)
    try:
        image, _ = client.images.build(
            fileobj=archive, custom_context=True, tag=tag, rm=True, network_mode="none", buildargs=buildargs, target="plan"
        )
        container = client.containers.create(image.id, command=["true"])
        try:
            files = {}
            for name in ("index-url", "image", "plan.json"):
                stream, _ = container.get_archive(f"/plan/{name}")
                with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
                    member = tar.extractfile(name)
                    assert member is not None
                    files[name] = member.read().decode()
            return files
        finally:
            container.remove()
    finally:
        client.close()


def test_the_plan_stage_writes_the_plan_for_the_target(planner) -> None:
    files = build(planner, plan_stage(), {"PLANNER": PLANNER, "DRIVER": "535.104.05", "GPU": "A100", "TORCH": "2.8"}, "cdtest/plan:ok")
    assert files["image"].strip() == "pytorch/pytorch:2.8.0-cuda12.9-cudnn9-runtime"
    assert re.fullmatch(r"https?://\S+/cu129\n", files["index-url"])
    plan = json.loads(files["plan.json"])
    assert plan["recommendation"]["variant"] == "cu129"


def test_the_plan_stage_stops_the_build_when_nothing_fits(planner) -> None:
    import docker

    with pytest.raises(docker.errors.BuildError) as failed:
        build(planner, plan_stage(), {"PLANNER": PLANNER, "DRIVER": "470.82.01", "GPU": "T4", "TORCH": "2.8"}, "cdtest/plan:fail")
    log = "".join(str(entry.get("stream", "")) for entry in failed.value.build_log)
    assert "FAIL" in log and "driver-too-old" in log
