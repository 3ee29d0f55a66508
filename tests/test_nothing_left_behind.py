"""Nothing a command starts outlives it: the NVML and libcuda children die with the command
(PR_SET_PDEATHSIG, and SIGINT/SIGTERM/SIGHUP handlers that kill them and exit 130/143/129), and a
libcuda whose cuDriverGetVersion hangs or crashes is stopped by the same watchdog as NVML.

The real nvidia-ml-py runs against the stand-in libnvidia-ml.so.1 (tests/fake_nvml) told to hang
in nvmlInit; libcuda is the stand-in tests/fake_cuda told to hang or crash. A process belongs to
a test when its environment holds that test's own FAKE_NVML_CONFIG / FAKE_CUDA_CONFIG."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

import nvml_stub
from cuda_stub import stand_in_env
from helpers import run_cli, signal_and_wait, start_cli, wait_for

A100 = {"count": 1, "gpu0.name": "NVIDIA A100-SXM4-80GB", "gpu0.cc": "8.0"}


@pytest.fixture(autouse=True)
def _need_gcc() -> None:
    if nvml_stub.gcc_path() is None:
        pytest.skip("gcc not found: cannot build the stand-ins")


def processes_with(marker: str) -> list[int]:
    """The running (not zombie) processes whose environment holds ``marker`` (NAME=value)."""
    wanted = marker.encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if wanted not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def children_of(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_while_nvml_hangs_ends_the_command_and_its_child(fake_nvml_env, signum: int, status: int) -> None:
    env = fake_nvml_env({**A100, "hang.nvmlInit": 1})
    marker = f"FAKE_NVML_CONFIG={env['FAKE_NVML_CONFIG']}"
    proc = start_cli("check", "--nvml-timeout", "300", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not wait_for(lambda: children_of(proc.pid) != []):
        proc.kill()
        proc.wait()
        pytest.fail("the NVML child never started")
    child = children_of(proc.pid)[0]
    err = signal_and_wait(proc, signum)
    assert proc.returncode == status, err
    assert b"Traceback" not in err
    assert wait_for(lambda: processes_with(marker) == [], 10), processes_with(marker)
    assert child not in processes_with(marker)


def test_the_nvml_child_dies_with_a_parent_killed_outright(fake_nvml_env) -> None:
    """SIGKILL leaves the parent no handler to run: the kernel ends the child (PR_SET_PDEATHSIG)."""
    env = fake_nvml_env({**A100, "hang.nvmlInit": 1})
    marker = f"FAKE_NVML_CONFIG={env['FAKE_NVML_CONFIG']}"
    proc = start_cli("check", "--nvml-timeout", "300", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: children_of(proc.pid) != []), "the NVML child never started"
    finally:
        proc.kill()
        proc.wait()
    assert wait_for(lambda: processes_with(marker) == [], 10), processes_with(marker)


def _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, cuda_config: dict, nvml_config: dict = A100) -> dict[str, str]:
    return stand_in_env(fake_nvml_env, fake_cuda_lib, tmp_path, cuda_config, nvml_config)


def test_a_hanging_cuDriverGetVersion_does_not_hang_check(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"hang": 1})
    proc = run_cli("probe", "--json", "--nvml-timeout", "1", env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    libcuda = json.loads(proc.stdout)["host"]["system"]["libcuda"]
    assert "did not return within 1 s" in libcuda["error"]
    assert libcuda["driver_version"] is None
    assert json.loads(proc.stdout)["host"]["driver"]["nvml_state"] == "ok"  # NVML was asked in a fresh child
    assert processes_with(f"FAKE_CUDA_CONFIG={env['FAKE_CUDA_CONFIG']}") == []
    check = run_cli("check", "--nvml-timeout", "1", env=env, timeout=60)
    assert check.returncode in (0, 1), check.stderr
    assert "Traceback" not in check.stderr


def test_a_crashing_libcuda_is_reported_not_fatal(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"crash": 1})
    proc = run_cli("probe", "--json", env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    libcuda = json.loads(proc.stdout)["host"]["system"]["libcuda"]
    assert "SIGSEGV" in libcuda["error"]
    assert json.loads(proc.stdout)["host"]["driver"]["nvml_state"] == "ok"  # NVML was read all the same


def test_a_healthy_libcuda_is_still_read_through_the_watchdog(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"version": 12080})
    proc = run_cli("probe", "--json", env=env, timeout=60)
    libcuda = json.loads(proc.stdout)["host"]["system"]["libcuda"]
    assert libcuda["loadable"] is True and libcuda["driver_version"] == "12.8"
    assert libcuda["path"] == str(fake_cuda_lib / "libcuda.so.1")


def test_nvml_that_hangs_after_libcuda_answered_keeps_libcudas_answer(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    """libcuda is asked first in NVML's child: its answer stands when NVML then hangs there."""
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"version": 12080}, {**A100, "hang.nvmlInit": 1})
    proc = run_cli("probe", "--json", "--nvml-timeout", "1", env=env, timeout=60)
    host = json.loads(proc.stdout)["host"]
    assert host["driver"]["nvml_state"] == "hung"
    assert host["system"]["libcuda"]["driver_version"] == "12.8" and host["system"]["libcuda"]["error"] is None
    assert processes_with(f"FAKE_NVML_CONFIG={env['FAKE_NVML_CONFIG']}") == []
