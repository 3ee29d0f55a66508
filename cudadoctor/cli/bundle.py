"""The command's own modules from one file: a `check` imports about 75 of cudadoctor's modules,
and each costs about 150 µs to find, read and validate before its code runs (docs/performance.md),
more than most of them cost to run. So the console script serves them from one compiled file in
the user cache (``app.cache.cache_dir()/modules-<install>-<python>.compiled``): their code objects, each
with the size, modification time, inode and ctime of the source it was compiled from, under a
header naming the bytecode version and a checksum of the rest.

At start, :func:`install` reads that file and puts a finder first on ``sys.meta_path`` that
serves each module whose source file still has that size, mtime, inode and ctime (one ``stat`` each), with
the same ``__file__``, ``__path__`` and code as the file system would give (tracebacks still show
the source); any other module, or one whose source changed, is imported as always. At the end
of a run, :func:`remember` writes the file again when the run imported one of cudadoctor's
modules the file lacked or had out of date, taking its bytecode from the ``__pycache__`` file
Python wrote when that is current (a module without one is left out: compiling it would cost
more than it saves), replacing the file atomically; a cache that cannot be written costs nothing
but the saving.

The file holds code that runs, so only one this user owns and nobody else may write is read;
only the console script and ``python -m cudadoctor`` use it (``__main__.py``), never an
``import cudadoctor``.
"""

from __future__ import annotations

import marshal
import os
import sys
from importlib.machinery import ModuleSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, Sequence

FORMAT = b"cudadoctor module bundle 2"
PACKAGE = "cudadoctor"
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name -> (source path, source size, source mtime_ns, is a package, marshalled code, source inode,
# source ctime_ns). The inode and ctime catch a source replaced with one of the same size and
# mtime (an installer or `touch -r`/`cp -p` that sets mtimes): nothing but the clock sets ctime.
Entry = tuple[str, int, int, bool, bytes, int, int]
_CodeType = type((lambda: None).__code__)


def _magic() -> bytes:
    """This interpreter's bytecode version: code from another (a Python upgraded in place under the
    same cache tag, as between pre-releases) must never be run."""
    try:
        import _frozen_importlib_external

        magic: bytes = _frozen_importlib_external.MAGIC_NUMBER
    except (ImportError, AttributeError):
        from importlib.util import MAGIC_NUMBER as magic
    return magic


def _head(body: bytes) -> bytes:
    """The header: the format, the bytecode version and a checksum of the body (a damaged bundle,
    whatever it still decodes to, is never run)."""
    import zlib

    return b"%s %s %08x" % (FORMAT, _magic().hex().encode(), zlib.crc32(body))


def bundle_path() -> str:
    from ..app.cache import cache_dir

    import zlib

    # One file per install (two venvs sharing a cache must not replace each other's) and Python.
    tag = sys.implementation.cache_tag or "python"
    install = zlib.crc32(PACKAGE_DIR.encode("utf-8", "surrogateescape"))
    # and one per user (a file someone else owns is never read: app.cache.read_private)
    return os.path.join(cache_dir(), f"modules-{install:08x}-{tag}-O{sys.flags.optimize}-u{os.geteuid()}.compiled")


class _Loader:
    def __init__(self) -> None:
        self.codes: dict[str, Any] = {}

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        exec(self.codes.pop(module.__name__), module.__dict__)


class BundleFinder:
    """Serves the bundled modules whose sources are unchanged; None for everything else."""

    def __init__(self, entries: dict[str, Entry]) -> None:
        self.entries = entries
        self.loader = _Loader()
        self.served: set[str] = set()
        self.before = {name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")}

    def find_spec(self, name: str, path: Optional[Sequence[str]] = None, target: Any = None) -> Optional[ModuleSpec]:
        entry = self.entries.get(name)
        if entry is None:
            return None
        try:
            origin, size, mtime, is_package, marshalled, inode, ctime = entry
            info = os.stat(origin)
            if (info.st_size, info.st_mtime_ns, info.st_ino, info.st_ctime_ns) != (size, mtime, inode, ctime):
                return None
            code = marshal.loads(marshalled)
        except (OSError, TypeError, ValueError, EOFError):
            return None  # gone, changed, or an entry that is not one: imported as always
        if type(code) is not _CodeType or not isinstance(origin, str):
            return None
        self.loader.codes[name] = code
        spec = ModuleSpec(name, self.loader, origin=origin, is_package=is_package)  # type: ignore[arg-type]
        if is_package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        spec.has_location = True
        self.served.add(name)
        return spec


_finder: Optional[BundleFinder] = None


def _read(path: str) -> dict[str, Entry]:
    from ..app.cache import read_private

    data = read_private(path)  # code that runs: only a regular file of this user's, that nobody else may write
    if data is None:
        return {}
    head, _, body = data.partition(b"\0")
    if head != _head(body):
        return {}
    package_dir, entries = marshal.loads(body)
    if package_dir != PACKAGE_DIR or not isinstance(entries, dict):
        return {}
    return entries


def install() -> None:
    """Serve the bundled modules from now on (nothing when there is no usable bundle)."""
    global _finder
    try:
        entries = _read(bundle_path())
    except Exception:  # none yet, unreadable, from another version: import as always
        entries = {}
    _finder = BundleFinder(entries)
    sys.meta_path.insert(0, _finder)


def _code(origin: str, size: int, mtime_ns: int) -> Optional[bytes]:
    """The module's marshalled code from its __pycache__ file, when that is current; None when it
    is not (the module is then left out: compiling it here would cost a run more than it saves)."""
    import importlib.util

    try:
        cached = importlib.util.cache_from_source(origin)
        with open(cached, "rb") as handle:
            data = handle.read()
        flags = int.from_bytes(data[4:8], "little")
        if (
            data[:4] == importlib.util.MAGIC_NUMBER and flags == 0
            and int.from_bytes(data[8:12], "little") == (mtime_ns // 1_000_000_000) & 0xFFFFFFFF
            and int.from_bytes(data[12:16], "little") == size & 0xFFFFFFFF
        ):  # fmt: skip
            return data[16:]
    except (OSError, ValueError, NotImplementedError):
        pass
    return None


def remember() -> None:
    """Write the bundle again when this run imported one of cudadoctor's modules from the file
    system (new, or changed since the bundle was written); never raises."""
    try:
        _remember()
    except Exception:
        pass


def _remember() -> None:
    finder = _finder
    if finder is None:
        return
    fresh: dict[str, Entry] = {}
    for name, module in list(sys.modules.items()):
        if (name != PACKAGE and not name.startswith(PACKAGE + ".")) or name in finder.before:
            continue  # not ours, or imported before the finder was there (the entry point's own)
        if name in finder.served:
            fresh[name] = finder.entries[name]
            continue
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None)
        if not isinstance(origin, str) or not origin.endswith(".py") or not origin.startswith(PACKAGE_DIR + os.sep):
            continue
        info = os.stat(origin)
        code = _code(origin, info.st_size, info.st_mtime_ns)
        if code is not None:
            is_package = getattr(spec, "submodule_search_locations", None) is not None
            fresh[name] = (origin, info.st_size, info.st_mtime_ns, is_package, code, info.st_ino, info.st_ctime_ns)
    if set(fresh) <= finder.served:
        return  # everything this run could store came from the bundle: nothing to add
    entries = dict(finder.entries)
    entries.update(fresh)
    from ..app.cache import write_private

    body = marshal.dumps((PACKAGE_DIR, entries))
    write_private(bundle_path(), _head(body) + b"\0" + body)
