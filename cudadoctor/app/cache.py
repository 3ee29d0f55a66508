"""Where cudadoctor keeps what it stores for later runs: ``$CUDADOCTOR_CACHE``, else
``$XDG_CACHE_HOME/cudadoctor``, else ``~/.cache/cudadoctor`` (the `table update` overlay, the
compiled table, the command's compiled modules). Imports nothing but ``os``, so that the entry
point can find the compiled modules before it imports anything else."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional

CACHE_ENV = "CUDADOCTOR_CACHE"


def cache_dir(environ: Optional[Mapping[str, str]] = None) -> str:
    environ = os.environ if environ is None else environ
    if environ.get(CACHE_ENV):
        return environ[CACHE_ENV]
    if environ.get("XDG_CACHE_HOME"):
        return os.path.join(environ["XDG_CACHE_HOME"], "cudadoctor")
    return os.path.join(os.path.expanduser("~"), ".cache", "cudadoctor")


# A stored file is read whole into memory: anything larger is not one cudadoctor wrote.
READ_LIMIT = 64 * 1024 * 1024


def read_private(path: str, limit: int = READ_LIMIT) -> Optional[bytes]:
    """The bytes of a file cudadoctor stored for this user, or None: missing, not a regular file
    (a FIFO, a device, a symlink: never followed, never blocked on), another user's, writable by
    group or others, over ``limit`` bytes, or unreadable. What it holds is trusted by the caller
    (the compiled table skips validation, the module bundle is code), so only a file nobody else
    could have written is read."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o022 or info.st_size > limit:
            return None
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            return None
        chunks = []
        left = info.st_size + 1  # one byte more: a file that grew while read is refused too
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            return None
        return b"".join(chunks)
    except (OSError, ValueError, MemoryError):
        return None
    finally:
        os.close(fd)


def write_private(path: str, data: bytes) -> bool:
    """Replace ``path`` with ``data`` atomically (a reader sees the old file or the new one), mode
    0600; False, and nothing left behind, when it cannot be written (a read-only or full disk).
    The temporary file is created new (O_EXCL, O_NOFOLLOW) under a name nobody can predict, so a
    symlink or file planted in the directory is never written through."""
    directory = os.path.dirname(path) or "."
    temporary = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd = os.open(temporary, flags, 0o600)
    except (OSError, ValueError):
        return False
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temporary, path)
        return True
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
