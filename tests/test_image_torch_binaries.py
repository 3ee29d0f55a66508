"""`check --image` on a present image reads the torch inside it from its own binaries (its
torch/lib/libtorch_cuda.so, streamed out of a created, never started container through the Docker
archive API), and that arch list beats what the table or the image's environment would say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import docker_daemon
from gpu_code import entry_bytes, fatbin_bytes, wrap_shared_object
from helpers import run_cli

TAG = "cudadoctor-test/own-torch:1"
LIB = "opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so"


@pytest.fixture(scope="module")
def image(docker_host: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    fatbin = fatbin_bytes([entry_bytes(2, arch, b"\x7fELF" + b"\0" * 60) for arch in (80, 90)])  # sm_80, sm_90 only
    library = wrap_shared_object(tmp_path_factory.mktemp("lib"), "libtorch_cuda.so", [fatbin])
    dockerfile = docker_daemon.dockerfile({"PYTORCH_VERSION": "2.15.0", "CUDA_VERSION": "13.2.0"}, {}) + f"COPY lib /{LIB.rsplit('/', 1)[0]}/\n"
    docker_daemon.build_image_from(docker_host, TAG, dockerfile, {"lib/libtorch_cuda.so": library.read_bytes()})
    return docker_host


def check(docker_host: str, gpu: str) -> tuple[int, dict]:
    run = run_cli("check", "--json", "--image", TAG, "--driver", "595.45.04", "--gpu", gpu, env={"DOCKER_HOST": docker_host})
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, json.loads(run.stdout)


def test_the_image_s_own_torch_decides_which_gpus_it_runs_on(image: str) -> None:
    status, data = check(image, "RTX 5090")
    assert data["target"]["image_facts"]["torch_arch_list"] == ["8.0", "9.0"]
    assert data["target"]["arch_list"] == ["8.0", "9.0"] and data["target"]["torch"] == "2.15"
    failing = [f for f in data["findings"] if f["code"] == "gpu-arch-not-built"]
    # The table says 2.15's wheels carry sm_120; this image's torch does not, and its binary wins.
    assert status == 1 and failing and "from its torch's binaries" in failing[0]["title"]
    assert "libtorch_cuda" in failing[0]["source"]
    status, data = check(image, "H100")  # (the private daemon has no NVIDIA runtime: that fails apart)
    assert "gpu-arch-not-built" not in [f["code"] for f in data["findings"]]
    assert any(f["code"] == "gpu-arch-ok" and "from its torch's binaries" in f["title"] for f in data["findings"])


def test_reading_the_image_leaves_no_container_behind(image: str) -> None:
    import docker

    check(image, "H100")
    client = docker.DockerClient(base_url=image, timeout=30)
    try:
        assert client.containers.list(all=True, filters={"label": "cudadoctor.scan"}) == []
    finally:
        client.close()


def test_an_image_without_a_cuda_torch_is_judged_as_before(image: str, tmp_path: Path) -> None:
    tag = "cudadoctor-test/no-torch:1"
    docker_daemon.build_image_from(image, tag, docker_daemon.dockerfile({"PYTORCH_VERSION": "2.15.0", "CUDA_VERSION": "13.2.0"}, {}))
    run = run_cli("check", "--json", "--image", tag, "--driver", "595.45.04", "--gpu", "RTX 5090", env={"DOCKER_HOST": image})
    data = json.loads(run.stdout)
    assert data["target"]["image_facts"]["torch_arch_list"] is None and data["target"]["image_facts"]["torch_binary_error"] is None
    codes = [f["code"] for f in data["findings"]]
    assert "gpu-arch-ok" in codes and "gpu-arch-not-built" not in codes  # the table's 2.15 cu132 carries sm_120
