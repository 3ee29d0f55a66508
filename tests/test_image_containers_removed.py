"""Every container `check --image` and `scan --image` create to read an image (never started) is
removed on every way out: a deadline passed mid-read, an archive too big to read in time, a
signal. The real private dockerd, images built FROM scratch."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

import docker_daemon
import nvml_stub
from helpers import run_cli, signal_and_wait, start_cli, wait_for
from sysroot import make_sysroot

# Enough files that creating a container from the image (the vfs storage driver copies them into
# its layer) outlasts a short --timeout; the case had 20 000.
MANY = 5_000
TORCH_LIB = "/usr/local/lib/python3.12/dist-packages/torch/lib"
A100 = {"count": 1, "gpu0.name": "NVIDIA A100-SXM4-80GB", "gpu0.cc": "8.0", "driver": "550.54.14", "cuda": 12040}
LABELS = ("cudadoctor.hygiene", "cudadoctor.scan")


@pytest.fixture(scope="module")
def images(docker_host):
    files = {f"{TORCH_LIB}/m{i}.so": b"not an ELF file\n" * 64 for i in range(MANY)}
    docker_daemon.load_image_with_files(docker_host, "cdtest/many:files", files)
    return docker_host


def reapers() -> list[int]:
    """Processes still removing a container for a command that has ended (probe.docker.remove_later)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    cmdline = handle.read()
            except OSError:
                continue
            if b"cudadoctor-" in cmdline and b"remove_container" in cmdline:
                found.append(int(entry))
    return found


def nothing_left(host: str) -> bool:
    """No container, and no process still removing one; a container the daemon was still creating
    at the deadline is removed by a detached process once made, so this waits (bounded) for it."""
    return wait_for(lambda: left_behind(host) == [] and reapers() == [], 150)


def left_behind(host: str) -> list[str]:
    import docker

    client = docker.DockerClient(base_url=host, timeout=30)
    try:
        # One listing call (the low-level API): containers.list() inspects each container it lists, and
        # one removed in between (by the command's detached reaper) raised NotFound here.
        return [(c.get("Names") or ["?"])[0].lstrip("/") for label in LABELS
                for c in client.api.containers(all=True, filters={"label": label})]
    finally:
        client.close()


@pytest.fixture
def env(fake_nvml_env, images, tmp_path):
    if nvml_stub.gcc_path() is None:
        pytest.skip("gcc not found: cannot build the stand-in libnvidia-ml.so.1")
    root = str(make_sysroot(tmp_path / "root", module="550.54.14"))
    return {**fake_nvml_env(A100), "DOCKER_HOST": images, "CUDADOCTOR_SYSROOT": root}


@pytest.mark.parametrize("timeout", ["0.1", "1"])
def test_a_short_timeout_on_a_large_image_leaves_no_container(env, images, timeout: str) -> None:
    proc = run_cli("check", "--image", "cdtest/many:files", "--timeout", timeout, env=env, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert nothing_left(images), left_behind(images)


def test_scan_of_a_large_image_with_a_short_timeout_leaves_no_container(env, images) -> None:
    proc = run_cli("scan", "--image", "cdtest/many:files", "--timeout", "0.1", env=env, timeout=120)
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert len(proc.stderr.splitlines()) <= 1 and "Traceback" not in proc.stderr
    assert nothing_left(images), left_behind(images)


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_while_an_image_is_read_removes_its_container(env, images, signum: int, status: int) -> None:
    proc = start_cli("scan", "--image", "cdtest/many:files", "--timeout", "300", env=env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: bool(left_behind(images)) or proc.poll() is not None)
    if proc.poll() is not None:
        pytest.skip("the scan ended before its container could be seen")
    err = signal_and_wait(proc, signum)
    assert proc.returncode == status, err
    assert b"Traceback" not in err
    assert nothing_left(images), left_behind(images)
