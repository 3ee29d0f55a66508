"""The one place that reads files the user names and the ``$CUDADOCTOR_*`` variables that name them.

Snapshots (``--snapshot``), tables (``--table`` / ``$CUDADOCTOR_TABLE``) and families files
(``--families`` / ``$CUDADOCTOR_FAMILIES``) are read here, then handed as text to the pure parsers
in ``model/`` and ``compat/``. Every failure is the parser's error type with a one-line message
that names the file.
"""

from __future__ import annotations

import os
import re
import stat

from ..compat.table import CompatTable, TableError
from ..model.facts import HostFacts
from ..model.snapshot import SnapshotError, decode_snapshot, json_value_problem, refuse_json_constant
from ..model.text import escape_control, has_lone_surrogate, shown_path
from .files import OutputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Callable, Mapping, Optional, Union

    from ..compat.config import Config

TABLE_ENV = "CUDADOCTOR_TABLE"
FAMILIES_ENV = "CUDADOCTOR_FAMILIES"


MAX_FILE_BYTES = 64 * 1024 * 1024  # no table, snapshot or families file is near this; /dev/zero is


def _open_regular(path: str, what: str, error: type[Exception]) -> tuple[int, os.stat_result]:
    """The file's descriptor (opened without blocking, so a FIFO with no writer is not waited on)
    and its fstat, once that says it is a regular file; else ``error("<what> <path>: <reason>")``
    (the path shown only then: a fleet opens thousands of files)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{what} {shown_path(path)}: no such file") from None
    except IsADirectoryError:
        raise error(f"{what} {shown_path(path)}: is a directory") from None
    except PermissionError:
        raise error(f"{what} {shown_path(path)}: permission denied") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a usable file name"
        raise error(f"{what} {shown_path(path)}: cannot be read ({reason})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{what} {shown_path(path)}: is a directory")
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{what} {shown_path(path)}: not a regular file (a FIFO, socket or device is not read)")
    except OSError as exc:
        os.close(fd)
        raise error(f"{what} {shown_path(path)}: cannot be read ({exc.strerror or exc})") from None
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def _stream(fd: int, what: str, shown: str, error: type[Exception]) -> BinaryIO:
    """A checked descriptor as a blocking byte stream (the descriptor is the stream's, or closed)."""
    try:
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except OSError as exc:
        os.close(fd)
        raise error(f"{what} {shown}: cannot be read ({exc.strerror or exc})") from None
    except BaseException:
        os.close(fd)
        raise
    return handle


def open_user_file(path: str, what: str, error: type[Exception]) -> BinaryIO:
    """The file opened for reading its bytes as a stream, checked as ``read_user_file`` checks it
    (a regular file, opened without blocking) but not for its size: the caller reads it a chunk at
    a time and bounds what it keeps (a fleet's node list, which may be gigabytes). Every failure
    raises ``error("<what> <path>: <reason>")``."""
    fd, _ = _open_regular(path, what, error)
    return _stream(fd, what, shown_path(path), error)


_READ_ON_BYTES = 64 * 1024  # each read past a file's size (a small allocation)


def _read(fd: int, size: int) -> bytes:
    """os.read on a descriptor opened without blocking: a local regular file ignores the flag, a
    file system that does not (FUSE, some network ones) is read again once it is set blocking."""
    try:
        return os.read(fd, size)
    except BlockingIOError:
        os.set_blocking(fd, True)
        return os.read(fd, size)


def read_user_bytes(path: str, what: str, error: type[Exception], limit: int) -> Union[bytes, BinaryIO]:
    """The bytes of a file of at most ``limit`` bytes; a larger one (or one that grew past
    ``limit`` while it was read) opened as ``open_user_file`` opens it, at its start, for the
    caller to stream. Checked as ``open_user_file`` checks it, and an open that fails raises as
    there; an OSError while reading is the caller's to word. A fleet reads thousands of snapshot
    files: a small file costs an open, an fstat and two reads of its descriptor (the second
    finds its end), not a Python file object."""
    fd, info = _open_regular(path, what, error)
    streamed = False
    try:
        if info.st_size <= limit:
            # A regular file reads the same without blocking (O_NONBLOCK leaves its reads alone).
            # Asked for its size and one byte more, not for the bound: os.read(n) allocates n.
            chunks = [_read(fd, info.st_size + 1)]
            read = len(chunks[0])
            while read <= limit:  # on to its end: it may have grown (or a read come short)
                more = _read(fd, min(limit + 1 - read, _READ_ON_BYTES))
                if not more:
                    return b"".join(chunks)  # one chunk: itself, not a copy
                chunks.append(more)
                read += len(more)
        os.lseek(fd, 0, os.SEEK_SET)  # too large: streamed from its start
        streamed = True
    finally:
        if not streamed:
            os.close(fd)
    return _stream(fd, what, shown_path(path), error)


def read_user_file(path: str, what: str, error: type[Exception]) -> str:
    """The file's text; every failure raises ``error("<what> <path>: <reason>")``.

    Only a regular file is read, and at most MAX_FILE_BYTES of it: the file is opened without
    blocking (a FIFO with no writer would otherwise wait forever) and checked with fstat before
    a byte is read (``open_user_file``), so a FIFO, a device (/dev/zero, /dev/urandom) or a
    directory is refused at once.
    """
    shown = shown_path(path)
    with open_user_file(path, what, error) as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise error(f"{what} {shown}: too large ({size} bytes; at most {MAX_FILE_BYTES})")
            data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise error(f"{what} {shown}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:  # it grew while we read it
        raise error(f"{what} {shown}: too large (at most {MAX_FILE_BYTES} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{what} {shown}: not UTF-8 text") from None


def read_stdin(error: type[Exception], stream: Optional[BinaryIO] = None, where: str = "standard input") -> str:
    """Standard input's text (``stream``: its bytes, by default ``sys.stdin.buffer``), read to its
    end but never more than MAX_FILE_BYTES: at most one byte beyond is read, so an endless or huge
    stream is refused (``error("standard input: too large ...")``) without being held in memory."""
    import sys

    if stream is None:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise error(f"{where}: cannot be read (not a byte stream)")
    try:
        data = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise error(f"{where}: cannot be read ({exc.strerror or exc})") from None
    if data is None:  # a non-blocking stream with nothing to read yet
        raise error(f"{where}: cannot be read (no data ready)")
    if len(data) > MAX_FILE_BYTES:
        raise error(f"{where}: too large (at most {MAX_FILE_BYTES} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{where}: not UTF-8 text") from None


# A lone surrogate can only come from a \uD800-\uDFFF escape: the text itself decoded as UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate_path(data: Any, path: str = "$") -> Optional[str]:
    """The JSON path of the first string (key or value) that is not valid Unicode, or None."""
    if isinstance(data, str):
        return path if has_lone_surrogate(data) else None
    if isinstance(data, dict):
        for key, value in data.items():
            if has_lone_surrogate(key):
                return f"{path} (a key)"
            found = _lone_surrogate_path(value, f"{path}.{escape_control(key)[:40]}")
            if found:
                return found
    elif isinstance(data, list):
        for i, item in enumerate(data):
            found = _lone_surrogate_path(item, f"{path}[{i}]")
            if found:
                return found
    return None


def _package_dir() -> str:
    """cudadoctor/ itself (this module lives in cudadoctor/app/)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def default_table_path() -> str:
    """The shipped table: inside the installed package, or at the top of a source checkout."""
    here = _package_dir()
    for candidate in (
        os.path.join(here, "data", "compat_table.json"),
        os.path.join(os.path.dirname(here), "data", "compat_table.json"),
    ):
        if os.path.isfile(candidate):
            return candidate
    return os.path.join(here, "data", "compat_table.json")


def table_path(path: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> str:
    """--table, else $CUDADOCTOR_TABLE, else the shipped table."""
    environ = os.environ if environ is None else environ
    return path or environ.get(TABLE_ENV) or default_table_path()


def families_path(path: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """--families, else $CUDADOCTOR_FAMILIES, else none."""
    environ = os.environ if environ is None else environ
    return path or environ.get(FAMILIES_ENV) or None


def load_table(path: Optional[str] = None) -> CompatTable:
    """Read and validate a table file (default: $CUDADOCTOR_TABLE, else the shipped one). The
    shipped table with no overlay over it is validated once and then loaded precompiled
    (app/compiled_table.py); every other table is validated on every load."""
    explicit = path or os.environ.get(TABLE_ENV)
    path = table_path(path)
    text = read_user_file(path, "table", TableError)
    if explicit:
        return _parse_table(text, path, explicit=True)
    from .overlay import overlay_path

    if os.path.lexists(overlay_path()):  # `table update`'s overlay (or something in its place): validated
        return _parse_table(text, path, explicit=False)
    from .compiled_table import load_compiled, store_compiled, table_key

    key = table_key(path, text)
    table = load_compiled(key) if key is not None else None
    if table is None:
        table = _parse_table(text, path, explicit=False)
        if key is not None:
            store_compiled(key, table)
    return table


def _parse_table(text: str, path: str, explicit: bool) -> CompatTable:
    import json  # here, not at the top: a check loads the compiled table and writes without json

    from ..compat.validate import parse_table, reject_duplicate_keys

    shown = shown_path(path)
    try:
        data = json.loads(text, object_pairs_hook=reject_duplicate_keys, parse_constant=refuse_json_constant)
    except json.JSONDecodeError as exc:
        raise TableError(f"table {shown}: not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    except TableError as exc:
        raise TableError(f"table {shown}: {exc}") from None
    except RecursionError:
        raise TableError(f"table {shown}: nested too deeply to be a compatibility table") from None
    except ValueError as exc:  # an integer over CPython's 4300-digit limit, NaN, Infinity
        raise TableError(f"table {shown}: {json_value_problem(exc)}") from None
    if _SURROGATE_ESCAPE.search(text):
        bad = _lone_surrogate_path(data)
        if bad:
            raise TableError(f"table {shown}: {bad}: not valid Unicode (a lone surrogate escape)")
    overlay = None
    if not explicit:  # the overlay of `table update` lies over the shipped table; --table FILE wins
        from .overlay import with_overlay

        shipped_data = data
        data, overlay = with_overlay(data)
        if overlay is not None:
            try:
                return parse_table(data, path)
            except TableError as exc:  # the overlay broke a rule: ignored, the shipped table stands
                from .overlay import warn_ignored

                warn_ignored(f"table overlay {shown_path(overlay)}: the merged table breaks a rule ({exc})")
                data, overlay = shipped_data, None
    try:
        return parse_table(data, path)
    except TableError as exc:
        merged = f" with the overlay {shown_path(overlay)} (`cudadoctor table update --clear` removes it)" if overlay else ""
        raise TableError(f"table {shown}{merged}: {exc}") from None


def load_families(path: str, table: CompatTable) -> CompatTable:
    """The table with the families of a TOML file added after its own; raises FamiliesError."""
    from ..compat.families import FamiliesError, parse_families  # only when a families file is given

    return parse_families(read_user_file(path, "families file", FamiliesError), table, path)


def config_path(path: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> str:
    """--config, else $XDG_CONFIG_HOME/cudadoctor/config.toml, else ~/.config/cudadoctor/config.toml."""
    if path:
        return path
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".config")
    return os.path.join(base, "cudadoctor", "config.toml")


def load_config(path: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> Optional["Config"]:
    """The team's defaults. A file named by --config must exist; the default file is optional
    (None: there is none, and the config parser is not even imported: this runs on every
    command). Raises ConfigError with a one-line message naming the file."""
    where = config_path(path, environ)
    if not path and not os.path.exists(where):
        return None
    from ..compat.config import ConfigError, parse_config

    text = read_user_file(where, "config", ConfigError)
    here = os.path.dirname(os.path.abspath(where))

    def resolve(name: str) -> str:
        return os.path.join(here, os.path.expanduser(name))

    return parse_config(text, where, resolve)


def load_snapshot(path: str) -> HostFacts:
    """Read a snapshot file; every failure is a SnapshotError with a one-line message."""
    return decode_snapshot(read_user_file(path, "snapshot", SnapshotError), f"snapshot {shown_path(path)}")


def snapshot_guard(path: str, force: bool) -> "Callable[[Optional[os.stat_result], int, str], None]":
    """The check ``files.write_in_place_checked`` runs where it replaces ``path``: unless
    ``force``, an existing file must be a cudadoctor snapshot (read through the directory, the
    last component not followed, without blocking, bounded)."""
    import json

    from ..model.snapshot import SNAPSHOT_KIND

    shown = shown_path(path)

    def guard(info: Optional[os.stat_result], dir_fd: int, name: str) -> None:
        if force or info is None:
            return
        is_snapshot = False
        try:
            fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
            with os.fdopen(fd, "rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
            if len(raw) <= MAX_FILE_BYTES:
                data = json.loads(raw.decode("utf-8"))
                is_snapshot = isinstance(data, dict) and data.get("kind") == SNAPSHOT_KIND
        except (OSError, ValueError, RecursionError):
            is_snapshot = False
        if not is_snapshot:
            raise OutputError(f"{shown} exists and is not a cudadoctor snapshot: give --force to replace it")

    return guard


def _existing_target(path: str, directory_hint: str, other_hint: str) -> Optional[os.stat_result]:
    """What is at a file cudadoctor is about to replace, looked at without following it: None when
    nothing is there yet; OutputError (one line) for a symlink (what it points to may change before
    the write), a directory, a FIFO, a device or a name that cannot be used."""
    shown = shown_path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a usable file name"
        raise OutputError(f"cannot write {shown}: {reason}") from None
    if stat.S_ISLNK(info.st_mode):
        raise OutputError(f"cannot write {shown}: it is a symlink (give the path of the file it points to)")
    if stat.S_ISDIR(info.st_mode):
        raise OutputError(f"cannot write {shown}: is a directory ({directory_hint})")
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(f"cannot write {shown}: not a regular file{other_hint}")
    return info


def check_output_target(path: str, force: bool = False) -> None:
    """Refuse, before any work is done, a target that writing would hang on or destroy: a FIFO, a
    device, a directory or a symlink always, and an existing file that is not a cudadoctor
    snapshot unless ``force`` (checked again where the file is replaced: snapshot_guard)."""
    import json

    from ..model.snapshot import SNAPSHOT_KIND

    shown = shown_path(path)
    info = _existing_target(path, "give a file name", " (to print the snapshot, use --json)")
    if info is None or force:
        return
    try:
        data = json.loads(read_user_file(path, "existing file", OutputError))
        is_snapshot = isinstance(data, dict) and data.get("kind") == SNAPSHOT_KIND
    except (OutputError, ValueError, RecursionError):
        is_snapshot = False
    if not is_snapshot:
        raise OutputError(f"{shown} exists and is not a cudadoctor snapshot: give --force to replace it")


METRICS_MARK = "# HELP cudadoctor_"  # how a metrics file cudadoctor wrote begins


def check_metrics_target(path: str, force: bool = False) -> None:
    """Refuse, before probing, a metrics file target that writing would hang on or destroy: a FIFO,
    a device, a directory or a symlink always, and an existing file that is neither empty nor
    cudadoctor's metrics unless ``force`` (checked again where the file is replaced: metrics_guard)."""
    shown = shown_path(path)
    info = _existing_target(path, "give a file name, e.g. .../cudadoctor.prom", "")
    if info is None or force or info.st_size == 0:
        return
    try:
        head = read_user_file(path, "existing file", OutputError)[: len(METRICS_MARK)]
    except OutputError:
        head = ""
    if head != METRICS_MARK:
        raise OutputError(f"{shown} exists and is not cudadoctor's metrics: give --force to replace it")


def metrics_guard(path: str, force: bool) -> "Callable[[Optional[os.stat_result], int, str], None]":
    """The check ``files.write_in_place_checked`` runs where it replaces a metrics file: unless
    ``force``, an existing file must be empty or begin as cudadoctor's metrics (read through the
    directory, the last component not followed, without blocking), so that a file put there while
    the host was being probed is not clobbered."""
    shown = shown_path(path)
    mark = METRICS_MARK.encode("utf-8")

    def guard(info: Optional[os.stat_result], dir_fd: int, name: str) -> None:
        if force or info is None or info.st_size == 0:
            return
        try:
            fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0), dir_fd=dir_fd)
            with os.fdopen(fd, "rb") as handle:
                head = handle.read(len(mark))
        except OSError:
            head = b""
        if head != mark:
            raise OutputError(f"{shown} exists and is not cudadoctor's metrics: give --force to replace it")

    return guard


def json_files_under(directory: str) -> tuple[list[str], list[str]]:
    """The ``*.json`` files below a directory (recursive, sorted), and one message per
    subdirectory that could not be listed (the fleet reports those and reads the rest)."""
    found: list[str] = []
    problems: list[str] = []

    def unreadable(exc: OSError) -> None:
        problems.append(f"{exc.filename}: cannot be listed ({exc.strerror or exc})")

    for root, dirs, files in os.walk(directory, onerror=unreadable):
        dirs.sort()
        prefix = os.path.join(root, "")  # joined once a directory, not once a file
        found.extend(prefix + name for name in sorted(files) if name.endswith(".json"))
    return found, problems


SCHEMA_SUFFIX = ".schema.json"


def schemas_dir() -> str:
    """The JSON Schemas shipped in the package (cudadoctor/schemas/<name>.schema.json)."""
    return os.path.join(_package_dir(), "schemas")


def schema_names() -> list[str]:
    """The outputs that have a schema: check, probe, recommend, table, ..."""
    try:
        entries = os.listdir(schemas_dir())
    except OSError:
        return []
    return sorted(name[: -len(SCHEMA_SUFFIX)] for name in entries if name.endswith(SCHEMA_SUFFIX))


def schema_text(name: str) -> Optional[str]:
    """The schema of one JSON output, as shipped (None when there is none by that name)."""
    if name not in schema_names():
        return None
    with open(os.path.join(schemas_dir(), name + SCHEMA_SUFFIX), encoding="utf-8") as handle:
        return handle.read()
