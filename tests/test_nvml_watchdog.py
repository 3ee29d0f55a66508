"""A wedged or crashing driver does not take the doctor down (issue 12, item 5).

The real nvidia-ml-py runs against the stand-in libnvidia-ml.so.1 (tests/fake_nvml), told by its
config to make one call hang forever, raise SIGSEGV, or answer an absurd device count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import nvml_stub
from cuda_stub import stand_in_env
from helpers import REPO_ROOT, Run, run_cli

A100 = {"count": 1, "gpu0.name": "NVIDIA A100-SXM4-80GB", "gpu0.cc": "8.0"}


@pytest.fixture(autouse=True)
def _need_gcc() -> None:
    if nvml_stub.gcc_path() is None:
        pytest.skip("gcc not found: cannot build the stand-in libnvidia-ml.so.1")


def run(args: list[str], overrides: dict[str, str], timeout: float = 60) -> tuple[Run, float]:
    proc = run_cli(*args, env=overrides, timeout=timeout)
    return proc, proc.elapsed


def codes(proc: subprocess.CompletedProcess) -> list[str]:
    return [f["code"] for f in json.loads(proc.stdout)["findings"]]


@pytest.mark.parametrize("function", ["nvmlInit", "nvmlDeviceGetCount_v2", "nvmlDeviceGetName"])
def test_a_hanging_call_is_stopped_and_reported(fake_nvml_env, function: str) -> None:
    key = "hang.nvmlInit" if function == "nvmlInit" else f"hang.{function}"
    proc, took = run(["check", "--json", "--nvml-timeout", "1"], fake_nvml_env({**A100, key: 1}))
    assert proc.returncode == 1, proc.stderr
    found = codes(proc)
    assert "nvml-hung" in found
    assert took < 20  # the bound is 1 s; the rest is start-up on a busy machine
    data = json.loads(proc.stdout)
    # The other probes still ran: the system facts (kernel module, device nodes) were judged.
    groups = {f["group"] for f in data["findings"]}
    assert len(groups) > 1, groups


def test_a_hang_named_by_environment_variable(fake_nvml_env) -> None:
    env = {**fake_nvml_env(A100), "FAKE_NVML_HANG": "nvmlSystemGetDriverVersion"}
    proc, _ = run(["probe", "--json", "--nvml-timeout", "0.5"], env)
    assert proc.returncode == 0, proc.stderr
    host = json.loads(proc.stdout)["host"]
    assert host["driver"]["nvml_state"] == "hung"
    assert host["system"] is not None  # the OS probe still ran
    assert host["gpus"] == []


@pytest.mark.parametrize("how", ["config", "environment"])
def test_a_crash_inside_nvml_is_reported(fake_nvml_env, how: str) -> None:
    if how == "config":
        env = fake_nvml_env({**A100, "crash.nvmlDeviceGetName": 1})
    else:
        env = {**fake_nvml_env(A100), "FAKE_NVML_CRASH": "nvmlDeviceGetCount_v2"}
    proc, _ = run(["check", "--json"], env)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    crashed = [f for f in data["findings"] if f["code"] == "nvml-crashed"]
    assert crashed, codes(proc)
    assert "SIGSEGV" in crashed[0]["detail"]
    assert "dmesg" in crashed[0]["hint"]


def test_the_hung_and_crashed_findings_have_the_hints_that_matter(fake_nvml_env) -> None:
    proc, _ = run(["check", "--json", "--nvml-timeout", "0.5"], fake_nvml_env({**A100, "hang.nvmlInit": 1}))
    finding = next(f for f in json.loads(proc.stdout)["findings"] if f["code"] == "nvml-hung")
    for words in ("dmesg", "Xid", "fallen off the bus", "reboot"):
        assert words in finding["detail"] + finding["hint"], words
    text, _ = run(["check", "--nvml-timeout", "0.5"], fake_nvml_env({**A100, "hang.nvmlInit": 1}))
    assert text.returncode == 1
    assert "nvml-hung" in text.stdout
    assert "Traceback" not in text.stderr


@pytest.mark.parametrize("count", [65, 4294967295])
def test_an_absurd_device_count_is_refused_without_walking_it(fake_nvml_env, count: int) -> None:
    proc, took = run(["check", "--json"], fake_nvml_env({**A100, "reported_count": count}))
    assert proc.returncode == 1, proc.stderr
    assert "nvml-device-count-invalid" in codes(proc)
    assert took < 30


def test_sixty_four_gpus_are_still_read(fake_nvml_env) -> None:
    proc, _ = run(["probe", "--json"], fake_nvml_env({"count": 64}))
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["host"]["gpus"]) == 64


def test_a_healthy_driver_is_read_through_the_watchdog(fake_nvml_env) -> None:
    proc, _ = run(["probe", "--json"], fake_nvml_env({**A100, "driver": "550.54.15"}))
    host = json.loads(proc.stdout)["host"]
    assert host["driver"]["nvml_state"] == "ok"
    assert host["driver"]["driver_version"] == "550.54.15"
    assert host["gpus"][0]["name"] == "NVIDIA A100-SXM4-80GB"


@pytest.mark.parametrize("value", ["0", "-1", "nan", "abc", "1e9"])
def test_nvml_timeout_is_validated(value: str) -> None:
    from hardening import assert_one_short_error, run_main

    assert_one_short_error(run_main(["check", "--nvml-timeout", value]), value)
    assert_one_short_error(run_main(["probe", "--nvml-timeout", value]), value)


def test_watchdog_states_load_from_a_snapshot(tmp_path) -> None:
    from hardening import run_main
    from helpers import host

    data = json.loads(open(host("no-driver")).read())
    for state, code in (("hung", "nvml-hung"), ("crashed", "nvml-crashed"), ("bad-device-count", "nvml-device-count-invalid")):
        data["host"]["driver"] = {"nvml_state": state, "nvml_error": "x"}
        path = tmp_path / f"{state}.json"
        path.write_text(json.dumps(data))
        outcome = run_main(["check", "--snapshot", str(path), "--json"])
        assert outcome.exit_code == 1, outcome.stderr
        assert code in [f["code"] for f in json.loads(outcome.stdout)["findings"]]


def test_in_process_watchdog_on_this_host() -> None:
    """The parent's side on whatever this machine has (no driver here, or a real one): an answer,
    whatever it is, through the child and back."""
    from cudadoctor.model.facts import NVML_STATES
    from cudadoctor.probe.nvml import probe_nvml_watched

    driver, gpus = probe_nvml_watched(30)
    assert driver.nvml_state in NVML_STATES
    assert isinstance(gpus, tuple)


def test_the_childs_answer_may_hold_only_fact_records() -> None:
    import marshal

    from cudadoctor.model.facts import DriverFacts, GpuFacts, MigDeviceFacts
    from cudadoctor.probe import nvml

    facts = (DriverFacts(nvml_state="ok"), (GpuFacts(index=3, mig_devices=(MigDeviceFacts(index=1, name="1g.10gb"),)),))
    assert nvml._rebuild(marshal.loads(marshal.dumps(nvml._plain(facts)))) == facts
    with pytest.raises(KeyError):
        nvml._rebuild(["HostFacts", {}])


def test_a_bad_table_after_nvml_started_stops_the_child(fake_nvml_env, tmp_path) -> None:
    """check starts NVML's child before it loads the table; a table error must not wait for it."""
    bad = tmp_path / "t.json"
    bad.write_text("{")
    env = fake_nvml_env({**A100, "hang.nvmlInit": 1})
    proc, took = run(["check", "--table", str(bad)], env)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert took < 10  # not waited for (the default bound is 10 s)
    # ... and not left behind: a child hung in nvmlInit would otherwise outlive the command.
    marker = f"FAKE_NVML_CONFIG={env['FAKE_NVML_CONFIG']}".encode()
    time.sleep(0.2)
    left = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as handle:
                    if marker in handle.read().split(b"\0"):
                        left.append(entry)
            except OSError:
                pass
    assert left == [], left


def test_cancel_kills_a_running_child() -> None:
    from cudadoctor.probe.nvml import NvmlWatch

    watch = NvmlWatch.start(30)
    if isinstance(watch, NvmlWatch):
        pid = watch.pid
        watch.cancel()
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, 0)  # reaped already
        watch.cancel()  # twice is harmless


def test_a_child_left_hanging_does_not_hold_the_commands_pipes(fake_nvml_env) -> None:
    """Even a child that survives (here: the parent leaves without cancelling it) has let go of
    stdout and stderr, so a pipeline reading cudadoctor's output ends when cudadoctor does."""
    env = {**os.environ, **fake_nvml_env({**A100, "hang.nvmlInit": 1})}
    code = (
        "import os\n"
        "from cudadoctor.probe.nvml import NvmlWatch\n"
        "watch = NvmlWatch.start(30)\n"
        "print(watch.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=20)
    pid = int(proc.stdout.strip())  # reaching this line means the pipes were closed: no 20 s wait
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


def test_the_python_api_probe_is_bounded_too(fake_nvml_env) -> None:
    """`cudadoctor.probe(nvml_timeout=...)`: the API reads NVML through the same watchdog."""
    code = "import json, cudadoctor; print(json.dumps(cudadoctor.probe(nvml_timeout=1)['host']['driver']['nvml_state']))"
    env = {**os.environ, **fake_nvml_env({**A100, "hang.nvmlInit": 1})}
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == "hung"


def test_the_python_api_refuses_an_nvml_bound_the_cli_would_refuse() -> None:
    import cudadoctor

    for value in (0, -1, "5", True, float("nan"), 601):
        with pytest.raises(cudadoctor.CudadoctorError, match="nvml_timeout"):
            cudadoctor.probe(nvml_timeout=value)  # type: ignore[arg-type]


# ---- one child, two answers (libcuda, then NVML: probe/watchdog.py's ``first``) ------------------


def _sleep_then(seconds: float, value: object) -> object:
    time.sleep(seconds)
    return value


def test_a_child_answers_first_then_work_each_within_its_own_timeout() -> None:
    from cudadoctor.probe.watchdog import OK, WatchedChild

    big = "x" * 300_000  # more than one read: part of it comes with the first answer
    child = WatchedChild.start(lambda: _sleep_then(0.6, big), 1.0, first=lambda: _sleep_then(0.6, {"a": 1}))
    assert child is not None
    assert child.first_answer() == (OK, {"a": 1})
    assert child.answer() == (OK, big)  # 1.2 s in all: work's second starts when first's answer is read


def test_work_is_answered_when_first_is_never_asked_for() -> None:
    from cudadoctor.probe.watchdog import OK, WatchedChild

    child = WatchedChild.start(lambda: [1, 2], 5.0, first=lambda: "first")
    assert child is not None and child.answer() == (OK, [1, 2])


def test_a_first_that_hangs_or_crashes_ends_the_child_and_work_has_no_answer() -> None:
    from cudadoctor.probe.watchdog import CRASHED, HUNG, NO_ANSWER, WatchedChild

    hung = WatchedChild.start(lambda: "never", 0.5, first=lambda: _sleep_then(60, None))
    assert hung is not None and hung.first_answer() == (HUNG, None)
    with pytest.raises(ChildProcessError):
        os.waitpid(hung.pid, 0)  # killed and reaped
    assert hung.answer() == (NO_ANSWER, None)

    crashed = WatchedChild.start(lambda: "never", 5.0, first=lambda: os.kill(os.getpid(), 11))
    assert crashed is not None and crashed.first_answer() == (CRASHED, "SIGSEGV")
    assert crashed.answer() == (NO_ANSWER, None)


def test_nvml_is_asked_in_a_fresh_child_when_libcuda_hangs_in_the_shared_one(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    code = (
        "import json; from cudadoctor.probe.nvml import NvmlWatch\n"
        "watch = NvmlWatch.start(1.0, libcuda=True); first = watch.pid\n"
        "libcuda = watch.libcuda(); driver, gpus = watch.result()\n"
        "print(json.dumps([libcuda.error, driver.nvml_state, len(gpus), watch.pid != first]))\n"
    )
    env = fake_nvml_env({"count": 2})
    config = nvml_stub.write_config(tmp_path / "cuda.conf", {"hang": 1})
    env = {**os.environ, **env, "LD_LIBRARY_PATH": f"{env['LD_LIBRARY_PATH']}:{fake_cuda_lib}", "FAKE_CUDA_CONFIG": str(config)}
    run = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    error, state, count, fresh = json.loads(run.stdout)
    assert "did not return within 1 s" in error
    assert (state, count, fresh) == ("ok", 2, True)


def test_a_cancelled_watch_asks_neither_library_again() -> None:
    from cudadoctor.probe.nvml import NvmlWatch
    from cudadoctor.probe.watchdog import live_children

    watch = NvmlWatch.start(30, libcuda=True)
    if isinstance(watch, NvmlWatch):
        pid = watch.pid
        watch.cancel()
        assert watch.libcuda() is None
        driver, gpus = watch.result()
        assert (driver.nvml_state, gpus, watch.pid) == ("crashed", (), pid)  # "ended without an answer", no fresh child
        assert live_children() == frozenset()


def test_a_first_answer_waited_for_briefly_is_pending_and_may_be_asked_again() -> None:
    from cudadoctor.probe.watchdog import OK, PENDING, WatchedChild

    child = WatchedChild.start(lambda: "work", 5.0, first=lambda: _sleep_then(0.5, "first"))
    assert child is not None
    assert child.first_answer(within=0.05) == (PENDING, None)
    assert child.first_answer() == (OK, "first")
    assert child.answer() == (OK, "work")


def test_a_frame_read_in_two_waits_is_put_together() -> None:
    from cudadoctor.probe.watchdog import _LATE, _LENGTH_BYTES, _READ, _read_frame

    answer = b"a first answer" * 10
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, len(answer).to_bytes(_LENGTH_BYTES, "big") + answer[:50])
        payload, got, ending = _read_frame(read_end, time.monotonic() + 0.05)
        assert (payload, ending) == (None, _LATE) and len(got) == _LENGTH_BYTES + 50
        os.write(write_end, answer[50:] + b"then work's")
        assert _read_frame(read_end, time.monotonic() + 5, got) == (answer, b"then work's", _READ)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_an_answer_already_in_the_pipe_when_the_deadline_passes_is_read() -> None:
    from cudadoctor.probe.watchdog import OK, WatchedChild

    child = WatchedChild.start(lambda: "done", 0.2)
    assert child is not None
    time.sleep(0.6)  # the child answered at once; nobody read it before its deadline
    assert child.answer() == (OK, "done")
    both = WatchedChild.start(lambda: "work", 0.2, first=lambda: "first")
    assert both is not None
    time.sleep(0.6)
    assert both.first_answer() == (OK, "first")
    assert both.answer() == (OK, "work")


def _watch_both(env: dict[str, str], timeout: float, prelude: str = "") -> list:
    """libcuda, then NVML, through one NvmlWatch in a process of their own (``prelude`` run first):
    [libcuda's error and version, NVML's state, GPUs, whether NVML was asked in another child,
    seconds taken, children left]."""
    code = prelude + (
        "import json, time; from cudadoctor.probe.nvml import NvmlWatch\n"
        "from cudadoctor.probe.watchdog import live_children\n"
        f"start = time.monotonic(); watch = NvmlWatch.start({timeout}, libcuda=True); first = watch.pid\n"
        "libcuda = watch.libcuda(); driver, gpus = watch.result()\n"
        "print(json.dumps([libcuda.error, libcuda.driver_version, driver.nvml_state, len(gpus), watch.pid != first,\n"
        "                  time.monotonic() - start, sorted(live_children())]))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, nvml_config: dict, cuda_config: dict) -> dict[str, str]:
    return {**os.environ, **stand_in_env(fake_nvml_env, fake_cuda_lib, tmp_path, cuda_config, nvml_config)}


def test_a_slow_libcuda_is_waited_for_while_nvml_is_asked_in_a_child_of_its_own(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"count": 2}, {"version": 12080, "delay_ms": 800})
    error, version, state, count, fresh, _, left = _watch_both(env, 10.0)
    assert (error, version) == (None, "12.8")  # its answer, after the grace, still stands
    assert (state, count, fresh, left) == ("ok", 2, True, [])  # the first child was stopped, not left


def test_libcuda_and_nvml_both_hanging_cost_one_timeout_not_two(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"count": 2, "hang.nvmlInit": 1}, {"hang": 1})
    error, version, state, count, fresh, seconds, left = _watch_both(env, 2.0)
    assert "did not return within 2 s" in error and version is None
    assert (state, count, fresh, left) == ("hung", 0, True, [])
    # NVML's child started at the grace, not at libcuda's deadline: about 2.25 s, where one after
    # the other takes 4 s at the least
    assert seconds < 3.6


def test_a_libcuda_that_crashes_after_the_grace_is_reported_and_nvml_answers_from_its_own_child(
    fake_nvml_env, fake_cuda_lib, tmp_path
) -> None:
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"count": 2}, {"delay_ms": 600, "crash": 1})
    error, version, state, count, fresh, _, left = _watch_both(env, 10.0)
    assert "killed by SIGSEGV" in error and version is None
    assert (state, count, fresh, left) == ("ok", 2, True, [])


# The second child cannot be forked (fork refused: out of processes): the first one goes on to NVML.
_NO_SECOND_CHILD = (
    "import sys, cudadoctor.probe.nvml\n"
    "nvml = sys.modules['cudadoctor.probe.nvml']  # (cudadoctor.probe is also the API's function)\n"
    "started = []\n"
    "real_start = nvml.WatchedChild.start\n"
    "def start(*args, **kwargs):\n"
    "    started.append(1)\n"
    "    return real_start(*args, **kwargs) if len(started) == 1 else None\n"
    "nvml.WatchedChild.start = start\n"
)


def test_a_slow_libcuda_whose_spare_child_cannot_start_has_nvml_answer_in_the_first(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"count": 2}, {"version": 12080, "delay_ms": 600})
    error, version, state, count, fresh, _, left = _watch_both(env, 10.0, _NO_SECOND_CHILD)
    assert (error, version) == (None, "12.8")
    assert (state, count, fresh, left) == ("ok", 2, False, [])


def test_a_first_answer_read_in_pieces_over_several_waits_is_whole() -> None:
    # The answers are written here, piece by piece, into the pipe of a child that has already
    # ended: each wait that returns PENDING keeps what it read, and the next one goes on from it.
    import marshal

    from cudadoctor.probe.watchdog import _LENGTH_BYTES, OK, PENDING, WatchedChild

    pid = os.fork()
    if pid == 0:
        os._exit(0)
    read_end, write_end = os.pipe()
    child = WatchedChild(pid, read_end, 10.0, first=True)
    try:
        first = marshal.dumps("first " * 20)
        frame = len(first).to_bytes(_LENGTH_BYTES, "big") + first
        assert child.first_answer(within=0.02) == (PENDING, None)  # nothing yet
        os.write(write_end, frame[:2])  # part of the length
        assert child.first_answer(within=0.02) == (PENDING, None)
        os.write(write_end, frame[2:_LENGTH_BYTES + 10])  # the length and part of the answer
        assert child.first_answer(within=0.02) == (PENDING, None)
        os.write(write_end, frame[_LENGTH_BYTES + 10:] + marshal.dumps("work"))
        assert child.first_answer(within=0.02) == (OK, "first " * 20)
    finally:
        os.close(write_end)
    assert child.answer() == (OK, "work")  # read to the end of the pipe, and the child reaped


def test_a_watch_cancelled_while_a_slow_libcuda_is_waited_for_leaves_no_child(fake_nvml_env, fake_cuda_lib, tmp_path) -> None:
    env = _libcuda_env(fake_nvml_env, fake_cuda_lib, tmp_path, {"count": 2, "hang.nvmlInit": 1}, {"hang": 1})
    code = (
        "import json, signal; from cudadoctor.probe.nvml import NvmlWatch\n"
        "from cudadoctor.probe.watchdog import live_children\n"
        "def interrupt(*_): raise KeyboardInterrupt\n"
        "signal.signal(signal.SIGALRM, interrupt); signal.setitimer(signal.ITIMER_REAL, 1.0)\n"
        "watch = NvmlWatch.start(30, libcuda=True)\n"
        "try:\n"
        "    watch.libcuda()\n"
        "except KeyboardInterrupt:\n"
        "    print(json.dumps([watch.spare is None, sorted(live_children())]))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == [False, []]  # the spare had started, and both children were stopped
