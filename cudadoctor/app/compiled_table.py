"""The shipped table, precompiled: validated once, then loaded without parsing or validating it again.

Loading ``data/compat_table.json`` means parsing about 150 KB of JSON and running every rule of
``compat/validate.py`` over it, the largest single cost of a `check` after the imports
(docs/performance.md). The result is the same every time for the same file and the same code, so
the first command that parses the shipped table stores the validated ``CompatTable`` in the user
cache (``overlay.cache_dir()``: ``$CUDADOCTOR_CACHE``, ``$XDG_CACHE_HOME/cudadoctor`` or
``~/.cache/cudadoctor``) and later commands load that instead.

The stored form is keyed by what decides it: the table file's path, its length and two checksums
of its bytes (CRC-32 and Adler-32 from zlib: built in and cheap, where hashlib's import costs more
than the check it would guard), the Python version, and the name, size and modification time of
every module in ``compat/`` and ``model/`` (the code that parses the table and the records it is
made of). A key that differs, a file that is missing, truncated or not readable, or any error
while loading it means the table is parsed and validated as before. Only the shipped table is
stored this way, and only when no ``table update`` overlay lies over it: a ``--table`` file,
``$CUDADOCTOR_TABLE``, a config's table and the overlay are validated on every run.

The form is a pickle of the records, read by an unpickler that accepts nothing but the table's
record classes (no other global, so no code runs while loading it). It is written to a temporary
file in the cache directory and renamed over the old one, so a concurrent reader sees the old form
or the new one; when the directory cannot be written (a read-only home, a full disk) nothing is
stored and every run parses, as before.
"""

from __future__ import annotations

import io
import os
import pickle
import sys
import zlib
from typing import Any, Optional

from ..compat.table import CompatTable
from .overlay import cache_dir

COMPILED_NAME = "compat-table.compiled"
FORMAT = b"cudadoctor compiled table 1"
# The modules whose classes a compiled table is made of; nothing else may be named in one.
_MODULES = ("cudadoctor.compat.table", "cudadoctor.compat.ngc", "cudadoctor.model.versions")
# Directories whose code decides what a parsed table holds (the parser, the rules, the records).
_CODE_DIRS = ("compat", "model")


def compiled_path() -> str:
    return os.path.join(cache_dir(), COMPILED_NAME)


def _code_fingerprint() -> str:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = []
    for name in _CODE_DIRS:
        try:
            with os.scandir(os.path.join(package, name)) as entries:
                for entry in entries:
                    if entry.name.endswith(".py"):
                        info = entry.stat()
                        parts.append(f"{name}/{entry.name}:{info.st_size}:{info.st_mtime_ns}")
        except OSError:
            parts.append(f"{name}:?")
    return ";".join(sorted(parts))


def table_key(path: str, text: str) -> bytes:
    """What a compiled table must have been made from: this file's bytes, this Python, this code."""
    data = text.encode("utf-8")
    fields = (
        FORMAT.decode(),
        sys.implementation.cache_tag or sys.version,
        os.path.abspath(path),
        str(len(data)),
        f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}",
        _code_fingerprint(),
    )
    return "\n".join(fields).replace("\0", "?").encode("utf-8", "surrogateescape")


class _TableUnpickler(pickle.Unpickler):
    """Accepts only the table's record classes: any other global refuses the whole file."""

    def find_class(self, module: str, name: str) -> Any:
        found = getattr(sys.modules.get(module), name, None) if module in _MODULES else None
        if not isinstance(found, type) or not hasattr(found, "__record_fields__"):
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a compiled table")
        return found


def _header(key: bytes, length: int) -> bytes:
    return b"%s\0%d\0%s\0" % (FORMAT, length, key)


def load_compiled(key: bytes, where: Optional[str] = None) -> Optional[CompatTable]:
    """The compiled table stored for ``key``; None when there is none, it was made from something
    else, or it cannot be read whole."""
    try:
        with open(where or compiled_path(), "rb") as handle:
            data = handle.read()
    except (OSError, ValueError):
        return None
    try:
        fmt, length, stored, body = data.split(b"\0", 3)
        if fmt != FORMAT or stored != key or int(length) != len(body):
            return None
        table = _TableUnpickler(io.BytesIO(body)).load()
    except Exception:  # truncated, garbled, from other code: parse the table instead
        return None
    return table if isinstance(table, CompatTable) else None


def store_compiled(key: bytes, table: CompatTable, where: Optional[str] = None) -> bool:
    """Store the compiled table for ``key``, replacing the old one atomically; False (and nothing
    changed) when it cannot be written."""
    target = where or compiled_path()
    try:
        body = pickle.dumps(table, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a table a test built with something pickle refuses: not worth storing
        return False
    directory = os.path.dirname(target) or "."
    temporary = os.path.join(directory, f".{COMPILED_NAME}.{os.getpid()}.tmp")
    try:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            view = memoryview(_header(key, len(body)) + body)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temporary, target)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
