"""Files cudadoctor writes: replaced atomically, so a reader sees the old file or the new one.

Used by `probe --output` (through loader.py) and by the table overlay `table update` writes.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from ..model.text import shown_path


class OutputError(Exception):
    """A file cudadoctor was asked to write that it cannot or must not write; one-line message."""


def write_atomically(path: str, text: str, *, follow_symlink: bool = True) -> None:
    """Replace ``path`` with ``text`` so that a reader sees the old file or the new one, never part
    of one: the text goes to a temporary file in the same directory, is flushed and fsynced, and
    is renamed over the target (then the directory is fsynced, so the rename survives a crash).
    A symlink is followed (its target is replaced) unless ``follow_symlink`` is False: then a
    symlink at ``path`` is refused, checked before writing and again just before the rename (the
    rename itself never follows one). An existing file keeps its permissions."""
    import signal
    import tempfile

    shown = shown_path(path)
    if not follow_symlink:
        _refuse_symlink(path, shown)
    target = os.path.realpath(path) if follow_symlink else os.path.abspath(path)
    directory = os.path.dirname(target) or "."
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    temp = None
    # SIGTERM mid-write ends the process through the cleanup below, not around it.
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    except ValueError:  # not the main thread: leave the handler alone
        previous = None
    try:
        fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        if not follow_symlink:
            _refuse_symlink(target, shown)
        os.replace(temp, target)
        temp = None
        _fsync_directory(directory)
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror or exc}") from None
    finally:
        if temp is not None:
            try:
                os.unlink(temp)
            except OSError:
                pass
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _refuse_symlink(path: str, shown: str) -> None:
    if os.path.islink(path):
        raise OutputError(f"{shown} is a symbolic link: cudadoctor does not write through one (remove it, or point the cache elsewhere)")


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems cannot fsync a directory; the rename itself is still atomic
        pass
    finally:
        os.close(fd)
