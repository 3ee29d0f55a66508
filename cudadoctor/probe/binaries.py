"""Finding the CUDA binaries of a Python environment, a directory or a wheel, and reading them.

Files are opened here and handed to the pure readers in cudadoctor.binaries, which read headers
and seek past payloads; a wheel's members are read inside the zip, never unpacked to disk. Which
package a file belongs to comes from the *.dist-info RECORD files beside it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
import zlib
from typing import Iterable, Iterator, Optional

from ..binaries.code import BinaryCode
from ..binaries.elf import is_elf
from ..binaries.errors import BinaryFormatError
from ..binaries.read import read_binary
from ..binaries.stream import read_forward
from ..binaries.scan import DIRECTORY, ENVIRONMENT, WHEEL, ScannedFile, ScanSource

# libfoo.so, libfoo.so.12, libfoo.so.12.8.90, _C.cpython-311-x86_64-linux-gnu.so
SHARED_OBJECT = re.compile(r"\.so(\.\d+)*$")
MAX_FILES = 500_000  # files walked in one directory tree
MAX_RECORD = 64 << 20  # one RECORD file
MAX_METADATA = 256 << 10  # the part of METADATA that holds its headers
PYTHON_TIMEOUT_S = 20.0

_SITE_SCRIPT = (
    "import json, sys, sysconfig\n"
    "paths = sysconfig.get_paths()\n"
    "print(json.dumps({'purelib': paths.get('purelib'), 'platlib': paths.get('platlib'), "
    "'version': '%d.%d.%d' % sys.version_info[:3]}))\n"
)


class ScanInputError(ValueError):
    """A named path or interpreter that cannot be scanned: one line that says what to do."""


def site_packages(python: str, timeout: float = PYTHON_TIMEOUT_S) -> tuple[tuple[str, ...], str]:
    """The site-packages directories of the interpreter, and its version: it is run once."""
    try:
        done = subprocess.run(
            [python, "-I", "-c", _SITE_SCRIPT], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except FileNotFoundError:
        raise ScanInputError(f"--python {python}: no such interpreter") from None
    except PermissionError:
        raise ScanInputError(f"--python {python}: not executable") from None
    except subprocess.TimeoutExpired:
        raise ScanInputError(f"--python {python}: gave no answer within {timeout:g} s") from None
    except OSError as exc:
        raise ScanInputError(f"--python {python}: cannot run it ({exc.strerror or exc})") from None
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise ScanInputError(f"--python {python}: not a Python interpreter that answers (exit status {done.returncode})")
    dirs: list[str] = []
    for key in ("purelib", "platlib"):
        value = answer.get(key)
        if isinstance(value, str) and value not in dirs and os.path.isdir(value):
            dirs.append(value)
    return tuple(dirs), str(answer.get("version") or "")


def venv_site_packages(root: str) -> tuple[str, ...]:
    """The site-packages of a virtual environment's directory (one with pyvenv.cfg), else ()."""
    if not os.path.isfile(os.path.join(root, "pyvenv.cfg")):
        return ()
    found: list[str] = []
    for lib in ("lib", "lib64"):
        base = os.path.join(root, lib)
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            candidate = os.path.join(base, name, "site-packages")
            if name.startswith("python") and os.path.isdir(candidate) and os.path.realpath(candidate) not in map(os.path.realpath, found):
                found.append(candidate)
    return tuple(found)


def scan_environment(python: str, timeout: float = PYTHON_TIMEOUT_S) -> ScanSource:
    dirs, version = site_packages(python, timeout)
    files: list[ScannedFile] = []
    for directory in dirs:
        files.extend(_scan_tree(directory))
    return ScanSource(kind=ENVIRONMENT, location=", ".join(dirs) or python, files=tuple(files), python=f"{python}, Python {version}" if version else python)


def scan_path(path: str) -> ScanSource:
    """A wheel file, a virtual environment, a directory (a site-packages, a build tree) or one ELF file."""
    if not os.path.exists(path):
        raise ScanInputError(f"{path}: no such file or directory")
    if os.path.isdir(path):
        dirs = venv_site_packages(path)
        if dirs:
            files = [f for d in dirs for f in _scan_tree(d)]
            return ScanSource(kind=ENVIRONMENT, location=", ".join(dirs), files=tuple(files))
        return ScanSource(kind=DIRECTORY, location=path, files=tuple(_scan_tree(path)))
    if path.endswith(".whl"):
        return scan_wheel(path)
    try:
        with open(path, "rb", buffering=0) as stream:
            head = stream.read(4)
            if not is_elf(head):
                raise ScanInputError(f"{path}: not an ELF file, a wheel or a directory")
            size = os.fstat(stream.fileno()).st_size
            code = read_binary(stream, size)
    except OSError as exc:
        raise ScanInputError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except BinaryFormatError as exc:
        raise ScanInputError(f"{path}: {exc}") from None
    return ScanSource(kind=DIRECTORY, location=os.path.dirname(path) or ".", files=(ScannedFile(path=os.path.basename(path), package=None, version=None, code=code),))


def scan_wheel(path: str) -> ScanSource:
    """Every shared object in a wheel, read inside the zip (each member streamed, nothing unpacked)."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise ScanInputError(f"{path}: not a readable wheel ({_why(exc)})") from None
    with archive:
        name, version = _wheel_metadata(archive)
        files = []
        for info in archive.infolist():
            if info.is_dir() or not SHARED_OBJECT.search(info.filename):
                continue
            files.append(_read_member(archive, info, name, version))
    return ScanSource(kind=WHEEL, location=path, files=tuple(f for f in files if f is not None))


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: Optional[str], version: Optional[str]) -> Optional[ScannedFile]:
    try:
        with archive.open(info) as stream:
            head = stream.read(4)
            if not is_elf(head):
                return None
            if info.compress_type == zipfile.ZIP_STORED:  # seeking in a stored member is cheap: read headers only
                code = read_binary(stream, info.file_size)  # type: ignore[arg-type]  # ZipExtFile is a seekable binary stream
            else:  # a deflated member seeks back only by inflating again: one pass, front to back
                pending = [head]
                code = read_forward(lambda count: pending.pop() if pending else stream.read(count), info.file_size)
    except BinaryFormatError as exc:
        return ScannedFile(path=info.filename, package=name, version=version, code=None, error=str(exc))
    except (OSError, zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError) as exc:
        return ScannedFile(path=info.filename, package=name, version=version, code=None, error=f"cannot read it inside the wheel ({_why(exc)})")
    return ScannedFile(path=info.filename, package=name, version=version, code=code)


def _wheel_metadata(archive: zipfile.ZipFile) -> tuple[Optional[str], Optional[str]]:
    for info in archive.infolist():
        parts = info.filename.split("/")
        if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA":
            try:
                with archive.open(info) as stream:
                    return name_and_version(stream.read(MAX_METADATA))
            except (OSError, zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError):
                return None, None
    return None, None


def name_and_version(head: bytes) -> tuple[Optional[str], Optional[str]]:
    name = version = None
    for line in head.decode("utf-8", "replace").splitlines():
        if not line.strip():
            break
        key, _, value = line.partition(":")
        if key.lower() == "name" and name is None:
            name = value.strip()
        elif key.lower() == "version" and version is None:
            version = value.strip()
    return name or None, version or None


def _owners(directory: str) -> dict[str, tuple[str, Optional[str]]]:
    """Real path of each file a *.dist-info RECORD in directory lists -> (package, version)."""
    owners: dict[str, tuple[str, Optional[str]]] = {}
    try:
        entries = sorted(os.listdir(directory))
    except OSError:
        return owners
    for entry in entries:
        if not entry.endswith(".dist-info"):
            continue
        info = os.path.join(directory, entry)
        name, version = _read_metadata(os.path.join(info, "METADATA"))
        if name is None:
            name = entry[: -len(".dist-info")].rsplit("-", 1)[0]
        for listed in _record_paths(os.path.join(info, "RECORD")):
            if SHARED_OBJECT.search(listed):
                owners[os.path.normpath(os.path.join(directory, listed))] = (name, version)
    return owners


def _read_metadata(path: str) -> tuple[Optional[str], Optional[str]]:
    try:
        with open(path, "rb") as stream:
            return name_and_version(stream.read(MAX_METADATA))
    except OSError:
        return None, None


def _record_paths(path: str) -> Iterator[str]:
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_RECORD)
    except OSError:
        return
    yield from record_lines(data)


def record_lines(data: bytes) -> Iterator[str]:
    """The paths a RECORD file lists."""
    for line in data.decode("utf-8", "replace").splitlines():
        # path,hash,size: a path holding a comma is quoted (csv); .so paths never are in practice
        listed = line[1:].split('",', 1)[0] if line.startswith('"') else line.rsplit(",", 2)[0]
        if listed:
            yield listed


def _scan_tree(root: str) -> Iterable[ScannedFile]:
    """Every ELF shared object under root; a file a *.dist-info RECORD lists (in any directory
    met, read before the walk descends into its siblings) is its package's, shown relative to
    that directory."""
    owners: dict[str, tuple[str, Optional[str], str]] = {}
    seen = 0
    for directory, subdirs, names in os.walk(root):
        subdirs.sort()
        if any(d.endswith(".dist-info") for d in subdirs):
            owners.update({path: (name, version, directory) for path, (name, version) in _owners(directory).items()})
        for name in sorted(names):
            if not SHARED_OBJECT.search(name):
                continue
            full = os.path.join(directory, name)
            if os.path.islink(full):  # libfoo.so -> libfoo.so.1: the target is met on its own
                continue
            seen += 1
            if seen > MAX_FILES:
                return
            owner = owners.get(os.path.normpath(full))
            shown = os.path.relpath(full, owner[2] if owner else root)
            scanned = _read_file(full, shown, owner[:2] if owner else None)
            if scanned is not None:
                yield scanned


def _read_file(full: str, shown: str, owner: Optional[tuple[str, Optional[str]]]) -> Optional[ScannedFile]:
    package, version = owner if owner else (None, None)
    try:
        # Unbuffered: the reader makes small reads far apart, and a buffered file would fill its
        # 8 KiB buffer at each one (tens of MB copied for a large library instead of kilobytes).
        with open(full, "rb", buffering=0) as stream:
            if not is_elf(stream.read(4)):
                return None
            code: BinaryCode = read_binary(stream, os.fstat(stream.fileno()).st_size)
    except BinaryFormatError as exc:
        return ScannedFile(path=shown, package=package, version=version, code=None, error=str(exc))
    except OSError as exc:
        return ScannedFile(path=shown, package=package, version=version, code=None, error=f"cannot read it ({exc.strerror or exc})")
    return ScannedFile(path=shown, package=package, version=version, code=code)


def _why(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


