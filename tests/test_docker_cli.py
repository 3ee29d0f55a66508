"""The container flags on the command line, without a daemon: validation and --require."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run_cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "args,says",
    [
        (["--require", "cuda>>12"], "bad token 'cuda>>12'"),
        (["--require", "cuda>=12.8", "--require", "cuda >= 12.0"], "bad token 'cuda'"),
        (["--require", "cuda>=12.8 brand>=tesla"], "bad token 'brand>=tesla'"),
        (["--image", "img; touch /tmp/cudadoctor-pwned"], "not allowed"),
        (["--image", "$(id)"], "not allowed"),
        (["--image", "a" * 5000], "characters long"),
        (["--pull"], "--pull needs --image"),
        (["--smoke"], "--smoke needs --image"),
        (["--image", "nvidia/cuda:12.8.1-base-ubuntu22.04", "--variant", "cu128"], "not both"),
        (["--timeout", "0"], "--timeout"),
    ],
)
def test_bad_input_is_one_line_exit_2(args, says):
    out = run_cli("check", "--driver", "550.54.14", *args)
    assert out.exit_code == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudadoctor: error: ") and says in lines[0]
    assert not Path("/tmp/cudadoctor-pwned").exists()


def test_require_against_what_if_flags():
    out = run_cli("check", "--json", "--driver", "550.54.14", "--gpu", "A100", "--require", "cuda>=12.8", "--require", "driver>=535")
    assert out.exit_code == 1
    data = json.loads(out.stdout)
    codes = {f["code"]: f for f in data["findings"]}
    assert (
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a newer "
        "version, or use an earlier cuda container" in codes["image-requirement-unsatisfied"]["detail"]
    )
    assert "driver>=535" in codes["image-requirements-ok"]["title"]
    assert data["target"]["requirements"] == ["cuda>=12.8", "driver>=535"]
    assert data["host"]["docker"] is None  # --require alone does not talk to Docker


def test_require_against_snapshot(tmp_path):
    snapshot = {
        "schema": 1,
        "kind": "cudadoctor-host-snapshot",
        "host": {
            "driver": {"nvml_state": "ok", "driver_version": "535.104.05", "cuda_driver_version": "12.2"},
            "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "brand": "geforce", "compute_capability": "8.9"}],
        },
    }
    path = tmp_path / "host.json"
    path.write_text(json.dumps(snapshot))
    for requirement, code in (("brand=geforce,driver>=535,driver<536", "image-requirements-ok"), ("brand=tesla", "image-requirement-unsatisfied")):
        out = run_cli("check", "--json", "--snapshot", str(path), "--require", requirement)
        codes = [f["code"] for f in json.loads(out.stdout)["findings"]]
        assert code in codes


def test_plain_check_does_not_import_docker():
    code = (
        "import sys\n"
        "from cudadoctor.cli import cli\n"
        "try:\n"
        "    cli.main(['check', '--json', '--driver', '550.54.14', '--gpu', 'A100'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('DOCKER-LOADED' if 'docker' in sys.modules or 'requests' in sys.modules else 'DOCKER-NOT-LOADED', file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "DOCKER-NOT-LOADED" in out.stderr


def test_require_without_nvml_is_unchecked(nvml_missing_env):
    out = run_cli("check", "--json", "--require", "cuda>=12.8", env=nvml_missing_env)
    codes = [f["code"] for f in json.loads(out.stdout)["findings"]]
    assert "image-requirements-unchecked" in codes and "image-requirement-unsatisfied" not in codes


def test_image_rule_states():
    from helpers import core_check

    from cudadoctor.model.facts import HostFacts, ImageFacts

    def image_codes(image):
        return [(f.code, f.severity) for f in core_check(HostFacts(), image_facts=image, only=["image"], image="x:1").findings]

    assert image_codes(ImageFacts("x:1", state="error", error="boom")) == [("image-inspect-failed", "fail")]
    unknown = ImageFacts("x:1", state="ok", env=(("CUDA_VERSION", "12.8.1"),))
    assert image_codes(unknown) == [("image-ok", "info"), ("image-torch-unknown", "info")]


def test_family_tag_is_judged_from_the_table_when_the_daemon_is_down(tmp_path):
    # No daemon listens here: the table still knows pytorch-cuda:v2.9-cu128, so the driver and
    # arch rules run on its facts and the inspection failure is only a warning.
    env = {"DOCKER_HOST": f"unix://{tmp_path}/nobody.sock"}
    out = run_cli("check", "--json", "--image", "pytorch-cuda:v2.9-cu128", "--driver", "570.86.16", "--gpu", "RTX 5090", "--timeout", "2", env=env)
    data = json.loads(out.stdout)
    codes = {f["code"]: f for f in data["findings"]}
    assert codes["docker-unreachable"]["severity"] == "fail"
    assert codes["image-inspect-failed"]["severity"] == "warn"
    assert "judged from the table as PyTorch 2.9 cu128" in codes["image-inspect-failed"]["detail"]
    assert (data["target"]["torch"], data["target"]["variant"]) == ("2.9", "cu128")
    assert codes["gpu-arch-ok"]["severity"] == "ok" and codes["driver-ok"]["severity"] == "ok"
