"""The table overlay `cudadoctor table update` writes to the user cache, and the shipped table with it.

Where: ``$CUDADOCTOR_CACHE``, else ``$XDG_CACHE_HOME/cudadoctor``, else ``~/.cache/cudadoctor``.
The overlay is replaced atomically (temporary file in the same directory, fsync, rename), so a
reader sees the old overlay or the new one, never half of one.
"""

from __future__ import annotations

import json
import os

from typing import Any, Mapping, Optional

from ..compat.table import TableError
from .files import OutputError, write_atomically

from .cache import CACHE_ENV, cache_dir  # noqa: F401  (CACHE_ENV: its old home, still read from here)

OVERLAY_NAME = "table-overlay.json"


def overlay_path(environ: Optional[Mapping[str, str]] = None) -> str:
    return os.path.join(cache_dir(environ), OVERLAY_NAME)


def read_overlay(path: Optional[str] = None) -> Optional[dict[str, Any]]:
    """The overlay's JSON, None when there is none; TableError (one line) when it cannot be read."""
    path = path or overlay_path()
    if not os.path.isfile(path):  # none there (or a cache directory this user cannot see into)
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise TableError(f"table overlay {path}: cannot be read ({getattr(exc, 'strerror', None) or exc}); "
                         "run `cudadoctor table update --clear`") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise TableError(f"table overlay {path}: not valid JSON; run `cudadoctor table update --clear`") from None
    if not isinstance(data, dict):
        raise TableError(f"table overlay {path}: not an overlay; run `cudadoctor table update --clear`")
    return data


def write_overlay(data: dict[str, Any], path: Optional[str] = None) -> str:
    """Replace the overlay atomically (files.write_atomically); returns its path. OutputError (one
    line) when it cannot be written: the previous overlay is then left as it was."""
    path = path or overlay_path()
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
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
    """(the table JSON with the overlay merged, the overlay's path; None when there is none). loader.load_table calls
    this for the shipped table only: ``--table FILE`` / ``$CUDADOCTOR_TABLE`` is used as it is. The
    merge itself is pure (compat/wheel_index.py)."""
    where = overlay_path()
    overlay = read_overlay(where)
    if overlay is None or not isinstance(data, dict):
        return data, None
    # Imported only when there is an overlay: the index reader needs html.parser and packaging,
    # which a plain `check` has no use for (they cost it several milliseconds of start-up).
    from ..compat.wheel_index import merge_overlay

    try:
        return merge_overlay(data, overlay), where
    except TableError as exc:
        raise TableError(f"table overlay {where}: {exc}") from None
