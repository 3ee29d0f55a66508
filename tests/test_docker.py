"""Docker checks against a real Docker daemon (started privately, or reused), real images and
real sockets. Images are built FROM scratch carrying the exact environment of real images."""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

import docker_daemon
import nvml_stub
from helpers import run_cli
from sysroot import make_sysroot

IMAGES = json.loads((Path(__file__).parent / "data" / "cuda_image_requirements.json").read_text())["images"]
# pytorch/pytorch images (pytorch Dockerfile, official stage): devel tags inherit the CUDA image's env.
PYTORCH_COMMON = {
    "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/opt/conda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "NVIDIA_VISIBLE_DEVICES": "all",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
    "LD_LIBRARY_PATH": "/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
    "PYTORCH_VERSION": "2.5.1",
}
PYTORCH_LABELS = {"com.nvidia.volumes.needed": "nvidia_driver"}
TEST_IMAGES = {
    "cdtest/cuda:12.8.1": (IMAGES["12.8.1"], {}),
    "cdtest/cuda:12.4.1": (IMAGES["12.4.1"], {}),
    "cdtest/cuda:11.8.0": (IMAGES["11.8.0"], {}),
    "cdtest/cuda:13.0.2": (IMAGES["13.0.2"], {}),
    "cdtest/pytorch:2.5.1-cuda12.4-cudnn9-devel": ({**IMAGES["12.4.1"], **PYTORCH_COMMON}, PYTORCH_LABELS),
    "cdtest/pytorch:2.5.1-cuda12.4-cudnn9-runtime": (PYTORCH_COMMON, PYTORCH_LABELS),
    "cdtest/legacy:12.8": ({"CUDA_VERSION": "12.8.1", "NVIDIA_VISIBLE_DEVICES": ""}, {}),
    "cdtest/disabled:13": ({**IMAGES["13.0.2"], "NVIDIA_DISABLE_REQUIRE": "true"}, {}),
    "cdtest/invalid:1": ({"NVIDIA_REQUIRE_CUDA": "cuda>>12.0", "NVIDIA_VISIBLE_DEVICES": "none"}, {}),
}
# One Tesla A100 on driver 550.54.14 (CUDA 12.4).
TESLA_HOST = {"driver": "550.54.14", "cuda": 12040, "nvml": "12.550.54.14", "count": 1, **nvml_stub.gpu_config(0)}
GEFORCE_HOST = {
    "driver": "550.54.14",
    "cuda": 12040,
    "nvml": "12.550.54.14",
    "count": 1,
    **nvml_stub.gpu_config(0, "NVIDIA GeForce RTX 4090", brand=5, cc="8.9"),
}


@pytest.fixture(scope="module")
def images(docker_host):
    for tag, (env, labels) in TEST_IMAGES.items():
        docker_daemon.build_image(docker_host, tag, env, labels)
    docker_daemon.load_image(docker_host, "cdtest/arm:12.8.1", "linux", "arm64", IMAGES["12.8.1"])
    return docker_host


def check_json(*args, env=None, **kwargs):
    out = run_cli("check", "--json", *args, env=env, **kwargs)
    assert out.exit_code in (0, 1), out.stderr
    data = json.loads(out.stdout)
    return out.exit_code, data, {f["code"]: f for f in data["findings"]}


@pytest.fixture
def gpu_host_root(tmp_path):
    """/proc, /sys and /dev of the stand-in GPU host, so the system probe agrees with NVML."""
    return str(make_sysroot(tmp_path / "root", module="550.54.14"))


@pytest.fixture
def tesla(fake_nvml_env, images, gpu_host_root):
    return {**fake_nvml_env(TESLA_HOST), "DOCKER_HOST": images, "CUDADOCTOR_SYSROOT": gpu_host_root}


@pytest.fixture
def geforce(fake_nvml_env, images, gpu_host_root):
    return {**fake_nvml_env(GEFORCE_HOST), "DOCKER_HOST": images, "CUDADOCTOR_SYSROOT": gpu_host_root}


# --- the daemon and its GPU runtime ---------------------------------------------------------------


def test_docker_ok_but_no_nvidia_runtime(tesla):
    status, data, codes = check_json("--docker", env=tesla)
    assert status == 1
    assert codes["docker-ok"]["severity"] == "ok"
    missing = codes["nvidia-runtime-missing"]
    assert missing["severity"] == "fail"
    assert 'could not select device driver "" with capabilities: [[gpu]]' in missing["detail"]
    assert "nvidia-ctk runtime configure --runtime=docker" in missing["hint"]
    assert data["host"]["docker"]["state"] == "ok"
    assert "runc" in data["host"]["docker"]["runtimes"]


def test_cdi_spec_counts_as_gpu_support(images, tmp_path, monkeypatch):
    from cudadoctor.model.facts import HostFacts
    from cudadoctor.probe.docker import connect
    from helpers import core_check

    (tmp_path / "nvidia.yaml").write_text('cdiVersion: "0.5.0"\nkind: nvidia.com/gpu\ndevices:\n- name: all\n')
    (tmp_path / "other.yaml").write_text("kind: vendor.com/fpga\n")
    monkeypatch.setenv("DOCKER_HOST", images)
    client, facts = connect(5.0, cdi_dirs=(str(tmp_path),))
    client.close()
    assert facts.cdi_nvidia_specs == (str(tmp_path / "nvidia.yaml"),)
    codes = [f.code for f in core_check(HostFacts(docker=facts), only=["docker"]).findings]
    assert codes == ["docker-ok", "nvidia-runtime-ok"]


def test_nothing_listens(tmp_path, tesla):
    status, data, codes = check_json("--docker", env={**tesla, "DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert status == 1 and "docker-unreachable" in codes
    assert "No such file" in codes["docker-unreachable"]["detail"]
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    status, data, codes = check_json("--docker", env={**tesla, "DOCKER_HOST": f"tcp://127.0.0.1:{port}"})
    assert "Connection refused" in codes["docker-unreachable"]["detail"]
    assert data["host"]["docker"]["state"] == "unreachable"


def _silent_server(path: str):
    """Accepts connections and never answers."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(8)
    held = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=serve, daemon=True).start()
    return server, held


def test_daemon_that_never_answers(tmp_path, tesla):
    path = str(tmp_path / "silent.sock")
    server, held = _silent_server(path)
    try:
        out = run_cli("check", "--json", "--docker", "--timeout", "1", env={**tesla, "DOCKER_HOST": f"unix://{path}"}, timeout=30)
    finally:
        server.close()
        for conn in held:
            conn.close()
    data = json.loads(out.stdout)
    finding = {f["code"]: f for f in data["findings"]}["docker-unreachable"]
    assert data["host"]["docker"]["state"] == "timeout"
    assert "within 1 s" in finding["title"] or "timed out" in finding["detail"].lower()
    assert held, "the probe never connected"


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv to act as another user")
def test_permission_denied(tmp_path, fake_nvml_env):
    directory = tmp_path / "sockdir"
    directory.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(directory, 0o755)
    path = directory / "docker.sock"
    server, held = _silent_server(str(path))
    os.chmod(path, 0o600)  # root's socket: nobody may connect
    config = fake_nvml_env(TESLA_HOST)
    for name in ("LD_LIBRARY_PATH", "FAKE_NVML_CONFIG"):  # nobody must read the stub and its config
        for parent in Path(config[name]).parents:
            if str(parent).startswith(str(Path(config[name]).anchor + "tmp")):
                os.chmod(parent, os.stat(parent).st_mode | 0o755)
    try:
        out = run_cli("check", "--json", "--docker", env={**config, "DOCKER_HOST": f"unix://{path}"}, user="65534")
    finally:
        server.close()
    data = json.loads(out.stdout)
    codes = {f["code"]: f for f in data["findings"]}
    assert data["host"]["docker"]["state"] == "permission-denied", out.stderr
    assert "docker group" in codes["docker-permission-denied"]["hint"]
    assert not held, "nobody got through"


# --- images ----------------------------------------------------------------------------------------


def test_cuda_image_on_tesla_passes_through_forward_compat_window(tesla):
    status, data, codes = check_json("--image", "cdtest/cuda:12.8.1", env=tesla)
    assert "image-requirement-unsatisfied" not in codes
    assert "NVIDIA_REQUIRE_CUDA" in codes["image-requirements-ok"]["title"]
    assert data["target"]["cuda"] == "12.8" and data["target"]["variant"] == "cu128"
    assert data["target"]["image_facts"]["facts_from"] == "image-env"
    env = dict(data["target"]["image_facts"]["env"])
    assert env["NVIDIA_REQUIRE_CUDA"] == IMAGES["12.8.1"]["NVIDIA_REQUIRE_CUDA"]
    assert "driver-minor-compat" in codes  # the same driver rules as --torch
    assert "image-torch-unknown" in codes


def test_cuda_image_on_geforce_is_refused(geforce):
    status, data, codes = check_json("--image", "cdtest/cuda:12.8.1", env=geforce)
    assert status == 1
    finding = codes["image-requirement-unsatisfied"]
    assert (
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver "
        "to a newer version, or use an earlier cuda container" in finding["detail"]
    )
    assert "570.26" in finding["hint"] and "jit-cdi" in finding["hint"]


@pytest.mark.parametrize("tag,ok", [("11.8.0", True), ("12.4.1", True), ("13.0.2", False)])
def test_official_images_on_geforce(geforce, tag, ok):
    status, data, codes = check_json("--image", f"cdtest/cuda:{tag}", env=geforce)
    assert ("image-requirement-unsatisfied" not in codes) is ok


def test_pytorch_devel_image(tesla):
    status, data, codes = check_json("--image", "cdtest/pytorch:2.5.1-cuda12.4-cudnn9-devel", env=tesla)
    failing = {code for code, f in codes.items() if f["severity"] == "fail"}
    assert failing == {"nvidia-runtime-missing"}  # the stand-in host (its root, the private dockerd) has no NVIDIA Container Toolkit
    assert (data["target"]["torch"], data["target"]["variant"]) == ("2.5", "cu124")
    assert codes["gpu-arch-ok"]["severity"] == "ok" and codes["driver-ok"]["severity"] == "ok"
    assert dict(data["target"]["image_facts"]["labels"]) == PYTORCH_LABELS


def test_pytorch_runtime_image_has_no_requirements(tesla):
    status, data, codes = check_json("--image", "cdtest/pytorch:2.5.1-cuda12.4-cudnn9-runtime", env=tesla)
    assert "image-no-requirements" in codes
    assert (data["target"]["torch"], data["target"]["cuda"]) == ("2.5", "12.4")  # CUDA from the tag


def test_legacy_image(geforce):
    status, data, codes = check_json("--image", "cdtest/legacy:12.8", env=geforce)
    finding = codes["image-requirement-unsatisfied"]
    assert "CUDA_VERSION" in finding["title"]
    assert "unsatisfied condition: cuda>=12.8, please update" in finding["detail"]
    assert "empty" in codes["image-visible-devices"]["title"]


def test_disabled_and_invalid_images(geforce):
    _, _, codes = check_json("--image", "cdtest/disabled:13", env=geforce)
    assert "image-requirements-disabled" in codes and "image-requirement-unsatisfied" not in codes
    status, _, codes = check_json("--image", "cdtest/invalid:1", env=geforce)
    assert status == 1
    assert "requirement error: invalid expression" in codes["image-requirement-invalid"]["detail"]
    assert "none: driver libraries but no GPU" in codes["image-visible-devices"]["title"]


def test_platform_mismatch(tesla):
    status, data, codes = check_json("--image", "cdtest/arm:12.8.1", env=tesla)
    assert codes["image-platform-mismatch"]["severity"] == "fail"
    assert "--platform linux/amd64" in codes["image-platform-mismatch"]["hint"]


def test_an_image_not_pulled_yet_is_a_note_not_a_failure(tesla):
    status, data, codes = check_json("--image", "cdtest/absent:1.0", env=tesla)
    failing = {code for code, f in codes.items() if f["severity"] == "fail"}
    assert failing == {"nvidia-runtime-missing"}  # `docker run` pulls a missing image; the daemon has no GPU runtime
    assert codes["image-not-found"]["severity"] == "info" and "`docker run` pulls it" in codes["image-not-found"]["title"]
    assert "names no PyTorch release or CUDA version" in codes["image-not-found"]["detail"]
    assert "docker pull cdtest/absent:1.0" in codes["image-not-found"]["hint"]


def test_absent_family_tag_uses_the_table(tesla):
    status, data, codes = check_json("--image", "pytorch-cuda:v2.9-cu128", env=tesla)
    assert codes["image-not-found"]["severity"] == "info"
    assert "judged from the table as PyTorch 2.9, CUDA 12.8 (cu128)" in codes["image-not-found"]["detail"]
    assert data["target"]["image_facts"]["facts_from"] == "table"
    assert (data["target"]["torch"], data["target"]["variant"]) == ("2.9", "cu128")
    assert "driver-minor-compat" in codes and "gpu-arch-ok" in codes


def test_pull_failure_is_a_finding(tesla):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    status, data, codes = check_json("--image", f"localhost:{port}/nothing:1", "--pull", env=tesla)
    assert status == 1 and "image-pull-failed" in codes


def test_smoke_without_gpu_runtime(tesla):
    status, data, codes = check_json("--image", "cdtest/pytorch:2.5.1-cuda12.4-cudnn9-runtime", "--smoke", env=tesla)
    smoke = codes["image-smoke-failed"]
    assert 'could not select device driver "" with capabilities: [[gpu]]' in smoke["detail"]
    assert "nvidia-runtime-missing" in smoke["detail"]
    assert "Docker answered: could not select device driver" in codes["nvidia-runtime-missing"]["detail"]
    assert data["target"]["image_facts"]["smoke"]["ran"] is False


def test_smoke_leaves_no_container(images, tesla):
    import docker

    run_cli("check", "--image", "cdtest/cuda:12.8.1", "--smoke", env=tesla)
    client = docker.DockerClient(base_url=images)
    try:
        assert client.containers.list(all=True, filters={"label": "cudadoctor=smoke"}) == []
    finally:
        client.close()


def test_text_report(geforce):
    out = run_cli("check", "--image", "cdtest/cuda:12.8.1", env={**geforce, "NO_COLOR": "1"})
    assert out.exit_code == 1
    assert "image-requirement-unsatisfied" in out.stdout and "Docker" in out.stdout
