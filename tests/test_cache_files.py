"""What cudadoctor stores in the user cache and trusts (the compiled table skips validation, the
module bundle is code): read only from a regular file of this user's that nobody else may write,
never blocking on it, never following a symlink; written through a temporary file nobody could
have planted, and nothing left behind when the write fails (app/cache.py)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudadoctor.app import cache, compiled_table
from cudadoctor.app.loader import default_table_path, load_table, read_user_file
from cudadoctor.cli import bundle
from cudadoctor.compat.table import TableError

from helpers import REPO_ROOT, cli_environment

WHAT_IF = ["check", "--json", "--driver", "535.104.05", "--gpu", "T4"]


def shipped_key() -> bytes:
    return compiled_table.table_key(default_table_path(), read_user_file(default_table_path(), "table", TableError))


def test_a_private_file_round_trips(tmp_path: Path) -> None:
    target = tmp_path / "stored"
    assert cache.write_private(str(target), b"data") is True
    assert cache.read_private(str(target)) == b"data"
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["stored"]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "group-writable", "too large", "directory"])
def test_a_file_not_plainly_this_users_is_not_read(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "stored"
    if kind == "fifo":
        os.mkfifo(target)  # open() on it would block until a writer came: never
    elif kind == "symlink":
        real = tmp_path / "real"
        cache.write_private(str(real), b"data")
        target.symlink_to(real)
    elif kind == "group-writable":
        cache.write_private(str(target), b"data")
        target.chmod(0o620)
    elif kind == "too large":
        cache.write_private(str(target), b"x" * 2000)
    else:
        target.mkdir()
    assert cache.read_private(str(target), limit=1000) is None


def test_a_planted_temporary_file_or_symlink_is_never_written_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious")
    target = tmp_path / "stored"
    # The old names were predictable (.NAME.<pid>.tmp): plant one of those, for this process.
    (tmp_path / f".{target.name}.{os.getpid()}.tmp").symlink_to(victim)
    assert cache.write_private(str(target), b"data") is True
    assert victim.read_text() == "precious"
    assert target.read_bytes() == b"data" and not target.is_symlink()


def test_a_failed_write_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache.os, "write", full)
    assert cache.write_private(str(tmp_path / "stored"), b"data") is False
    assert list(tmp_path.iterdir()) == []


def test_a_compiled_table_others_may_write_is_not_used() -> None:
    load_table()
    path = Path(compiled_table.compiled_path())
    assert compiled_table.load_compiled(shipped_key()) is not None
    path.chmod(0o666)  # anyone could have replaced the rows it holds, unvalidated
    assert compiled_table.load_compiled(shipped_key()) is None
    load_table()  # parsed and validated, and stored again privately
    assert path.stat().st_mode & 0o777 == 0o600
    assert compiled_table.load_compiled(shipped_key()) is not None


@pytest.mark.parametrize("which", ["bundle", "compiled table"])
def test_a_fifo_in_place_of_a_cache_file_does_not_hang_the_command(which: str) -> None:
    path = bundle.bundle_path() if which == "bundle" else compiled_table.compiled_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.mkfifo(path)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "cudadoctor", *WHAT_IF], cwd=REPO_ROOT, env=cli_environment(),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert run.returncode in (0, 1), run.stderr
        assert run.stdout.startswith("{")
    finally:
        os.unlink(path)


def test_a_table_module_replaced_with_the_same_size_and_mtime_changes_the_key() -> None:
    """An installer or `cp -p` can give a changed parser the old size and mtime; its ctime moves."""
    key = shipped_key()
    module = Path(compiled_table.__file__).parent.parent / "compat" / "table.py"
    info = module.stat()
    os.utime(module, ns=(info.st_atime_ns, info.st_mtime_ns))  # the same times: only ctime changes
    assert module.stat().st_mtime_ns == info.st_mtime_ns
    assert shipped_key() != key
