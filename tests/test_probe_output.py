"""`probe --output` never loses a file (issue 12, item 7): it writes a temporary file in the same
directory, fsyncs it and renames it over the target, so a reader sees the old file or the new
one; an existing file that is not a snapshot is replaced only with --force."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hardening import assert_one_short_error, run_main
from helpers import REPO_ROOT, host, start_cli

OLD = Path(host("h100-550")).read_text()


def snapshot_ok(path: Path) -> bool:
    data = json.loads(path.read_text())
    return data["kind"] == "cudadoctor-host-snapshot" and "host" in data


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_writes_a_loadable_snapshot(tmp_path: Path) -> None:
    target = tmp_path / "host.json"
    outcome = run_main(["probe", "--output", str(target)])
    assert outcome.exit_code == 0, outcome.stderr
    assert snapshot_ok(target)
    assert leftovers(tmp_path) == []
    assert run_main(["check", "--snapshot", str(target), "--json"]).exit_code in (0, 1)


def test_replaces_an_existing_snapshot_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "host.json"
    target.write_text(OLD)
    target.chmod(0o640)
    assert run_main(["probe", "-o", str(target)]).exit_code == 0
    assert target.read_text() != OLD and snapshot_ok(target)
    assert target.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("content", ["important notes\n", "", '{"kind": "something else"}', "\x00\xff"])
def test_a_file_that_is_not_a_snapshot_needs_force(tmp_path: Path, content: str) -> None:
    target = tmp_path / "notes.txt"
    target.write_text(content, encoding="utf-8", errors="surrogateescape")
    before = target.read_bytes()
    outcome = run_main(["probe", "--output", str(target)])
    assert_one_short_error(outcome)
    assert "--force" in outcome.stderr
    assert target.read_bytes() == before
    assert run_main(["probe", "--output", str(target), "--force"]).exit_code == 0
    assert snapshot_ok(target)


@pytest.mark.parametrize("kind", ["fifo", "directory", "/dev/null"])
def test_special_targets_are_refused_without_blocking(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        target = str(tmp_path / "fifo")
        os.mkfifo(target)  # no reader: opening it for writing would block forever
    elif kind == "directory":
        target = str(tmp_path)
    else:
        target = kind
    for extra in ([], ["--force"]):
        assert_one_short_error(run_main(["probe", "--output", target, *extra]), kind)


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_a_symlink_is_refused_and_its_target_untouched(tmp_path: Path, force: list[str]) -> None:
    real = tmp_path / "real.json"
    real.write_text(OLD)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert_one_short_error(run_main(["probe", "-o", str(link), *force]), "symlink")
    assert link.is_symlink() and real.read_text() == OLD


@pytest.mark.parametrize("swapped_in", ["symlink", "other file"])
def test_a_target_swapped_during_the_probe_is_checked_again_at_the_rename(fake_nvml_env, tmp_path: Path, swapped_in: str) -> None:
    """The guard runs before the probe and again where the file is replaced: a symlink (or a
    file that is not a snapshot) put at the path while NVML was being read is not written through."""
    import nvml_stub
    from test_nothing_left_behind import children_of, wait_for

    if nvml_stub.gcc_path() is None:
        pytest.skip("gcc not found")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = tmp_path / "host.json"
    target.write_text(OLD)  # a snapshot: the first check passes
    env = fake_nvml_env({"count": 1, "hang.nvmlInit": 1})
    proc = start_cli("probe", "--output", str(target), "--nvml-timeout", "3", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: children_of(proc.pid) != []), "the NVML child never started"
        target.unlink()
        if swapped_in == "symlink":
            target.symlink_to(victim)
        else:
            target.write_text("not a snapshot\n")
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, err
    assert len(err.splitlines()) == 1, err
    assert victim.read_text() == "precious\n"
    if swapped_in == "symlink":
        assert target.is_symlink() and b"symlink" in err
    else:
        assert target.read_text() == "not a snapshot\n" and b"--force" in err
    assert leftovers(tmp_path) == []


def test_a_missing_directory_or_a_read_only_one(tmp_path: Path) -> None:
    assert_one_short_error(run_main(["probe", "-o", str(tmp_path / "no" / "such" / "dir.json")]))
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        assert_one_short_error(run_main(["probe", "-o", str(locked / "h.json")]))


def _writer_script(target: Path, sleep_in_fsync: float) -> str:
    # The real writer, made slow at one point (the fsync) so that a signal lands mid-write.
    return (
        "import os, sys, time\n"
        "import cudadoctor.app.files as files\n"
        "real_fsync = os.fsync\n"
        "def slow_fsync(fd):\n"
        "    print('writing', flush=True)\n"
        f"    time.sleep({sleep_in_fsync})\n"
        "    real_fsync(fd)\n"
        "os.fsync = slow_fsync\n"
        f"files.write_atomically({str(target)!r}, '{{\"partial\": ' + 'x' * 100000)\n"
    )


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT])
def test_a_writer_killed_mid_write_leaves_the_old_file(tmp_path: Path, how: signal.Signals) -> None:
    target = tmp_path / "host.json"
    target.write_text(OLD)
    proc = subprocess.Popen([sys.executable, "-c", _writer_script(target, 30)], cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "writing"  # the temporary file is written, not yet renamed
        proc.send_signal(how)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert target.read_text() == OLD
    if how != signal.SIGKILL:  # a catchable signal also removes the temporary file
        assert leftovers(tmp_path) == []


def test_twenty_concurrent_writers_and_a_reader(tmp_path: Path) -> None:
    target = tmp_path / "host.json"
    target.write_text(OLD)
    seen: list[str] = []
    torn: list[str] = []
    stop = threading.Event()

    def read_loop() -> None:
        while not stop.is_set():
            text = target.read_text()
            try:
                json.loads(text)
                seen.append("ok")
            except ValueError:
                torn.append(text[:100])

    reader = threading.Thread(target=read_loop)
    reader.start()
    env = {"LD_LIBRARY_PATH": str(tmp_path)}  # no libnvidia-ml here: quick probes
    writers = [
        start_cli("probe", "-o", str(target), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(20)
    ]  # fmt: skip
    try:
        statuses = [w.wait(timeout=120) for w in writers]
    finally:
        stop.set()
        reader.join()
    assert statuses == [0] * 20, [w.stderr.read() for w in writers if w.stderr]
    assert torn == []
    assert seen
    assert snapshot_ok(target)
    assert leftovers(tmp_path) == []
