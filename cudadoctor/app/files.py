"""Files cudadoctor writes: replaced atomically, so a reader sees the old file or the new one.

Used by `probe --output` (through loader.py) and by the table overlay `table update` writes.
"""

from __future__ import annotations

import os
import stat

from ..model.text import shown_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Optional


class OutputError(Exception):
    """A file cudadoctor was asked to write that it cannot or must not write; one-line message."""


def write_atomically(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` so that a reader sees the old file or the new one, never part
    of one (:func:`write_in_place_checked`, with no guard). A symlink at ``path`` is refused, with
    its own line before anything is written, and again where the file is replaced. An existing file
    keeps its permissions."""
    _refuse_symlink(path, shown_path(path))
    write_in_place_checked(path, text)


def _refuse_symlink(path: str, shown: str) -> None:
    if os.path.islink(path):
        raise OutputError(f"{shown} is a symbolic link: cudadoctor does not write through one (remove it, or point the cache elsewhere)")


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def write_in_place_checked(path: str, text: str, guard: Optional[Callable[[Optional[os.stat_result], int, str], None]] = None) -> None:
    """Replace ``path`` with ``text`` atomically: a temporary file in the same directory, flushed
    and fsynced, renamed over the target, then the directory fsynced (a reader sees the old file or
    the new one; SIGTERM mid-write removes the temporary file). The target is checked where it is
    replaced, so that a file swapped in while the text was being made cannot redirect the write: the directory is
    opened once, and just before the rename the last component is looked at through it without
    following a symlink (a symlink, or anything but a regular file, is refused) and ``guard(stat
    or None, directory fd, name)`` runs again (it raises OutputError to refuse). The rename is
    made relative to the same directory. A symlink at the last component is never followed."""
    import signal
    import tempfile

    shown = shown_path(path)
    directory = os.path.dirname(path) or "."
    name = os.path.basename(path)
    if not name or name in (".", ".."):
        raise OutputError(f"cannot write {shown}: not a file name")
    try:
        dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror or exc}") from None
    temp = None
    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    except ValueError:  # not the main thread: leave the handler alone
        previous = None
    try:
        before = _target_state(dir_fd, name, shown)
        if guard is not None:
            guard(before, dir_fd, name)
        mode = stat.S_IMODE(before.st_mode) if before is not None else _default_mode()
        fd, temp_path = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
        temp = os.path.basename(temp_path)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        # The check where the file is replaced: what is at the name now, not what was there before.
        now = _target_state(dir_fd, name, shown)
        if guard is not None:
            guard(now, dir_fd, name)
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        temp = None
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {exc.strerror or exc}") from None
    finally:
        if temp is not None:
            try:
                os.unlink(temp, dir_fd=dir_fd)
            except OSError:
                pass
        os.close(dir_fd)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _target_state(dir_fd: int, name: str, shown: str) -> Optional[os.stat_result]:
    """The last component as it is (not followed): None when absent; a symlink or anything but a
    regular file is refused."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise OutputError(f"cannot write {shown}: it is a symlink (give the path of the file it points to)")
    if stat.S_ISDIR(info.st_mode):
        raise OutputError(f"cannot write {shown}: is a directory (give a file name)")
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(f"cannot write {shown}: not a regular file (to print the snapshot, use --json)")
    return info


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
