"""docs/api.md's examples run as written, and the API returns what the CLI's JSON carries."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import schema_check
from helpers import REPO_ROOT, host, invoke

DOC = REPO_ROOT / "docs" / "api.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_doc_has_examples() -> None:
    assert len(python_blocks()) >= 5


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_each_example_runs(index: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(REPO_ROOT)
    exec(compile(python_blocks()[index], f"docs/api.md[{index}]", "exec"), {"__name__": "docs_api"})
    capsys.readouterr()


def test_the_api_returns_the_cli_json() -> None:
    from cudadoctor import check, recommend

    for name in ("t4-470", "h100-550", "k80-470"):
        api = check(host(name))
        cli = invoke("check", "--json", "--snapshot", host(name)).json()
        assert api == cli
        schema_check.validate("check", api)
    api = recommend(host("t4-470"), torch="2.7")
    cli = invoke("recommend", "--format", "json", "--snapshot", host("t4-470"), "--torch", "2.7").json()
    assert api == cli
    schema_check.validate("recommend", api)


def test_importing_cudadoctor_loads_nothing_heavy() -> None:
    code = (
        "import sys, cudadoctor; "
        "heavy = sorted(m for m in sys.modules if m.startswith(('cudadoctor.api', 'cudadoctor.doctor', 'click', 'rich', 'pynvml')));"
        "print(heavy); assert cudadoctor.check.__module__ == 'cudadoctor.api'"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_bad_input_is_one_error_with_the_cli_message() -> None:
    import cudadoctor

    with pytest.raises(cudadoctor.CudadoctorError, match="--gpu: unknown GPU"):
        cudadoctor.check(driver="550.54.15", gpus=["Voodoo 2"])
    with pytest.raises(cudadoctor.CudadoctorError, match="no such file"):
        cudadoctor.recommend("/nonexistent/host.json")
    with pytest.raises(cudadoctor.CudadoctorError, match="snapshot"):
        cudadoctor.check({"kind": "something else"})


def test_the_api_judges_multi_gpu_jobs_and_forward_compat_as_the_cli_does() -> None:
    from cudadoctor import check

    api = check(host("h100-550"), gpus_per_job=16)
    cli = invoke("check", "--json", "--snapshot", host("h100-550"), "--gpus-per-job", "16").json()
    assert api == cli
    assert any(f["code"] == "multi-gpu-job-too-large" for f in api["findings"])
    api = check(host("h100-550"), torch="2.8", variant="cu128", driver="535.104.05", forward_compat="12.8")
    cli = invoke(
        "check", "--json", "--snapshot", host("h100-550"), "--torch", "2.8", "--variant", "cu128", "--driver", "535.104.05",
        "--forward-compat", "12.8",
    ).json()
    assert api == cli
    assert any(f["code"] == "driver-forward-compat-active" for f in api["findings"])


@pytest.mark.parametrize("bad", [0, 65, True, 2.0, "2"])
def test_gpus_per_job_outside_1_to_64_is_one_error(bad: object) -> None:
    import cudadoctor

    with pytest.raises(cudadoctor.CudadoctorError, match="GPUs per job must be a whole number from 1 to 64"):
        cudadoctor.check(host("h100-550"), gpus_per_job=bad)  # type: ignore[arg-type]


def test_a_topology_that_cannot_apply_is_one_error_with_the_cli_message() -> None:
    import cudadoctor

    with pytest.raises(cudadoctor.CudadoctorError, match="it holds no pair facts"):
        cudadoctor.check(host("h100-550"), topology=host("h100-550"))
