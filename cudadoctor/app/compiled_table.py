"""The shipped table, precompiled: validated once, then loaded without parsing or validating it again.

Loading ``data/compat_table.json`` means parsing about 150 KB of JSON and running every rule of
``compat/validate.py`` over it, the largest single cost of a `check` after the imports
(docs/performance.md). The result is the same every time for the same file and the same code, so
the first command that parses the shipped table stores the validated ``CompatTable`` in the user
cache (``overlay.cache_dir()``: ``$CUDADOCTOR_CACHE``, ``$XDG_CACHE_HOME/cudadoctor`` or
``~/.cache/cudadoctor``) and later commands load that instead.

The stored form is keyed by what decides it: the table file's path, its length and two checksums
of its bytes (CRC-32 and Adler-32 from zlib: built in and cheap, where hashlib's import costs more
than the check it would guard), the Python version, and the name, size, modification time, inode and ctime of
every module in ``compat/`` and ``model/`` (the code that parses the table and the records it is
made of). A key that differs, a file that is missing, truncated or not readable, or any error
while loading it means the table is parsed and validated as before. Only the shipped table is
stored this way, and only when no ``table update`` overlay lies over it: a ``--table`` file,
``$CUDADOCTOR_TABLE``, a config's table and the overlay are validated on every run.

The form is the records as plain values in marshal's format (built in: nothing to import, where
pickle's modules cost more than loading the table through them saves; and loading it runs no
code): a record is a list of its class's number and its field values, a record seen before is a
reference to it, and only the table's record classes (in ``_MODULES``) can be named. It is written
to a temporary file in the cache directory and renamed over the old one, so a concurrent reader
sees the old form or the new one; when the directory cannot be written (a read-only home, a full
disk) nothing is stored and every run parses, as before.
"""

from __future__ import annotations

import marshal
import os
import sys
import zlib

from ..compat.table import CompatTable
from .cache import cache_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional

COMPILED_NAME = "compat-table.compiled"
FORMAT = b"cudadoctor compiled table 1"
# The modules whose classes a compiled table is made of; nothing else may be named in one.
_MODULES = ("cudadoctor.compat.table", "cudadoctor.compat.ngc", "cudadoctor.model.versions")
# Directories whose code decides what a parsed table holds (the parser, the rules, the records).
_CODE_DIRS = ("compat", "model")


def compiled_path() -> str:
    """One file per install: two venvs sharing a cache must not replace each other's."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    install = zlib.crc32(package.encode("utf-8", "surrogateescape"))
    stem, _, suffix = COMPILED_NAME.rpartition(".")
    # and per user: in a shared $CUDADOCTOR_CACHE each user's file is their own (read_private
    # refuses a file someone else owns, so a shared name would only be replaced back and forth)
    return os.path.join(cache_dir(), f"{stem}-{install:08x}-u{os.geteuid()}.{suffix}")


def _code_fingerprint() -> Optional[str]:
    """The compat/ and model/ sources as they are now; None when one cannot be listed (then nothing
    is cached: a key that cannot see the code could match a table compiled by other code)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = []
    for name in _CODE_DIRS:
        try:
            with os.scandir(os.path.join(package, name)) as entries:
                for entry in entries:
                    if entry.name.endswith(".py"):
                        info = entry.stat()
                        # inode and ctime too: a file replaced with one of the same size and mtime
                        parts.append(f"{name}/{entry.name}:{info.st_size}:{info.st_mtime_ns}:{entry.inode()}:{info.st_ctime_ns}")
        except OSError:
            return None
    return ";".join(sorted(parts))


def table_key(path: str, text: str) -> Optional[bytes]:
    """What a compiled table must have been made from: this file's bytes, this Python, this code;
    None when the code cannot be seen (the table is then parsed, and nothing stored)."""
    code = _code_fingerprint()
    if code is None:
        return None
    data = text.encode("utf-8")
    fields = (
        FORMAT.decode(),
        sys.implementation.cache_tag or sys.version,
        os.path.abspath(path),
        str(len(data)),
        f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}",
        code,
    )
    return "\n".join(fields).replace("\0", "?").encode("utf-8", "surrogateescape")


# Values in the stored form: anything that is not a list is itself; a list is one of these.
# [n >= 0, field values...]: a record of class n; [_REFERENCE, i]: the i-th record again;
# [_TUPLE, items...] and [_DICT, {key: value}]: a tuple or dict that holds records;
# [_PLAIN, list]: a list (the table's own JSON, CompatTable.raw), as it is.
_REFERENCE, _TUPLE, _DICT, _PLAIN = -1, -2, -3, -4


def _encode(table: CompatTable) -> bytes:
    classes: dict[type, int] = {}
    seen: dict[int, int] = {}

    def encode(value: Any) -> Any:
        kind = type(value)
        if kind is tuple:
            items = [encode(item) for item in value]
            return [_TUPLE, *items] if any(type(item) is list for item in items) else value
        if kind is dict:
            entries = {key: encode(item) for key, item in value.items()}
            return [_DICT, entries] if any(type(item) is list for item in entries.values()) else value
        if kind is list:
            return [_PLAIN, value]
        if hasattr(kind, "__record_fields__"):
            if id(value) in seen:
                return [_REFERENCE, seen[id(value)]]
            seen[id(value)] = len(seen)
            number = classes.setdefault(kind, len(classes))
            fields = value.__dict__
            names: tuple[str, ...] = kind.__record_names__
            return [number, *(encode(fields[name]) for name in names)]
        return value

    body = encode(table)
    return marshal.dumps((tuple((cls.__module__, cls.__qualname__) for cls in classes), body))


def _decode(data: bytes) -> Any:
    names, body = marshal.loads(data)
    classes = []
    for module, name in names:
        found = getattr(sys.modules.get(module), name, None) if module in _MODULES else None
        if not isinstance(found, type) or not hasattr(found, "__record_fields__"):
            raise ValueError(f"{module}.{name} is not part of a compiled table")
        classes.append((found, found.__record_names__))  # type: ignore[attr-defined]
    records: list[Any] = []
    new = object.__new__

    def decode(value: Any) -> Any:
        tag = value[0]
        if tag >= 0:
            cls, field_names = classes[tag]
            record = new(cls)
            records.append(record)
            fields = record.__dict__
            for name, item in zip(field_names, value[1:]):
                fields[name] = decode(item) if type(item) is list else item
            return record
        if tag == _REFERENCE:
            return records[value[1]]
        if tag == _TUPLE:
            return tuple([decode(item) if type(item) is list else item for item in value[1:]])
        if tag == _DICT:
            return {key: decode(item) if type(item) is list else item for key, item in value[1].items()}
        if tag == _PLAIN:
            return value[1]
        raise ValueError(f"unknown tag {tag!r}")

    return decode(body) if type(body) is list else body


def _header(key: bytes, length: int) -> bytes:
    return b"%s\0%d\0%s\0" % (FORMAT, length, key)


def load_compiled(key: bytes, where: Optional[str] = None) -> Optional[CompatTable]:
    """The compiled table stored for ``key``; None when there is none, it was made from something
    else, or it cannot be read whole."""
    from .cache import read_private

    # Loading skips validation: only a regular file of this user's that nobody else may write.
    data = read_private(where or compiled_path())
    if data is None:
        return None
    try:
        fmt, length, stored, body = data.split(b"\0", 3)
        if fmt != FORMAT or stored != key or int(length) != len(body):
            return None
        table = _decode(body)
    except Exception:  # truncated, garbled, from other code: parse the table instead
        return None
    return table if isinstance(table, CompatTable) else None


def store_compiled(key: bytes, table: CompatTable, where: Optional[str] = None) -> bool:
    """Store the compiled table for ``key``, replacing the old one atomically; False (and nothing
    changed) when it cannot be written."""
    target = where or compiled_path()
    try:
        body = _encode(table)
    except Exception:  # a value marshal refuses (not one a parsed table holds): not worth storing
        return False
    from .cache import write_private

    return write_private(target, _header(key, len(body)) + body)
