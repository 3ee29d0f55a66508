"""The table overlay `cudadoctor table update` writes to the user cache, and the shipped table with it.

Where: ``$CUDADOCTOR_CACHE``, else ``$XDG_CACHE_HOME/cudadoctor``, else ``~/.cache/cudadoctor``.
The overlay is replaced atomically (temporary file in the same directory, fsync, rename), so a
reader sees the old overlay or the new one, never half of one; an overlay path that is a symbolic
link is refused, never followed. An overlay that cannot be read or used is ignored with one warning
line on stderr (the shipped table is used), never fatal: `table update` replaces it.
"""

from __future__ import annotations

import os
import stat
import sys

from ..compat.table import TableError
from ..model.text import one_line, shown_path
from .files import OutputError, write_atomically

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional

MAX_OVERLAY_BYTES = 64 * 1024 * 1024
_warned: set[str] = set()

from .cache import CACHE_ENV, cache_dir  # noqa: E402,F401  (CACHE_ENV: its old home, still read from here)

OVERLAY_NAME = "table-overlay.json"


def overlay_path(environ: Optional[Mapping[str, str]] = None) -> str:
    return os.path.join(cache_dir(environ), OVERLAY_NAME)


def read_overlay(path: Optional[str] = None) -> Optional[dict[str, Any]]:
    """The overlay's JSON, None when there is none; TableError (one line) when it cannot be read."""
    import json  # here: most runs have no overlay, and a check writes its JSON without json
    path = path or overlay_path()
    shown = shown_path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise TableError(f"table overlay {shown}: a symbolic link, not read") from None
        if not os.path.exists(path):  # a cache directory this user cannot see into
            return None
        raise TableError(f"table overlay {shown}: cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TableError(f"table overlay {shown}: not a regular file")
        if info.st_size > MAX_OVERLAY_BYTES:
            raise TableError(f"table overlay {shown}: larger than {MAX_OVERLAY_BYTES // (1024 * 1024)} MiB")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_OVERLAY_BYTES + 1)
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TableError(f"table overlay {shown}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    finally:
        os.close(fd)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # ValueError: JSONDecodeError, and integers past CPython's digit limit
        raise TableError(f"table overlay {shown}: not valid JSON") from None
    if not isinstance(data, dict):
        raise TableError(f"table overlay {shown}: not an overlay")
    return data


def warn_ignored(message: str) -> None:
    """One warning line on stderr (once per message per process): the overlay is not used."""
    if message in _warned:
        return
    _warned.add(message)
    sys.stderr.write(one_line(f"cudadoctor: warning: {message}; it is ignored (`cudadoctor table update` replaces it, "
                              "`cudadoctor table update --clear` removes it)", 400) + "\n")


def usable_overlay(path: Optional[str] = None) -> Optional[dict[str, Any]]:
    """The overlay when it can be read and has the overlay's shape; else None, with one warning line."""
    from ..compat.wheel_index import check_overlay_shape  # only when there is an overlay

    path = path or overlay_path()
    try:
        data = read_overlay(path)
        if data is not None:
            check_overlay_shape(data)
    except TableError as exc:
        text = str(exc)
        warn_ignored(text if text.startswith("table overlay") else f"table overlay {shown_path(path)}: {text}")
        return None
    return data


def refuse_symlinked(path: Optional[str] = None) -> None:
    """OutputError (one line) when the overlay path is a symbolic link: it is never written through
    (checked again where it is replaced, files.write_atomically)."""
    path = path or overlay_path()
    if os.path.islink(path):
        raise OutputError(f"{shown_path(path)} is a symbolic link: cudadoctor does not write through one "
                          "(remove it, or point the cache elsewhere)")


def write_overlay(data: dict[str, Any], path: Optional[str] = None) -> str:
    """Replace the overlay atomically (files.write_atomically); returns its path. OutputError (one
    line) when it cannot be written, or when the path is a symbolic link (refused, never followed):
    the previous overlay is then left as it was."""
    import json

    path = path or overlay_path()
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {shown_path(path)}: {exc.strerror or exc}") from None
    write_atomically(path, json.dumps(data, indent=1) + "\n")
    return path


def clear_overlay(path: Optional[str] = None) -> bool:
    """Remove the overlay; False when there was none."""
    try:
        os.unlink(path or overlay_path())
    except FileNotFoundError:
        return False
    return True


def with_overlay(data: Any) -> tuple[Any, Optional[str]]:
    """(the table JSON with the overlay merged, the overlay's path; None when there is none or it is
    ignored). loader.load_table calls this for the shipped table only: ``--table FILE`` /
    ``$CUDADOCTOR_TABLE`` is used as it is. A malformed overlay is ignored with one warning line.
    The merge itself is pure (compat/wheel_index.py)."""
    where = overlay_path()
    if not os.path.lexists(where):
        return data, None
    overlay = usable_overlay(where)
    if overlay is None or not isinstance(data, dict):
        return data, None
    # Imported only when there is an overlay: the index reader needs html.parser and packaging,
    # which a plain `check` has no use for (they cost it several milliseconds of start-up).
    from ..compat.wheel_index import merge_overlay

    try:
        return merge_overlay(data, overlay), where
    except TableError as exc:
        warn_ignored(f"table overlay {shown_path(where)}: {exc}")
        return data, None
