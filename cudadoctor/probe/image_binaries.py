"""The CUDA binaries of a container image, read through the Docker Engine's archive call.

A container is created from the image (never started, no network), the directories where Python
packages live are streamed out of it as tar archives (``GET /containers/{id}/archive``), and each
shared object in the stream is read front to back as it passes (binaries/stream.py): nothing is
written to disk and at most a window of each file is held in memory. The container is removed
afterwards. Which package owns a file comes from the RECORD files met in the same streams.
"""

from __future__ import annotations

import contextlib
import io
import os
import tarfile
import time
from typing import Any, Iterator, Optional

from ..binaries.errors import BinaryFormatError
from ..binaries.scan import IMAGE, ScannedFile, ScanSource
from ..binaries.stream import read_forward
from .binaries import MAX_METADATA, MAX_RECORD, SHARED_OBJECT, ScanInputError, name_and_version, record_lines
from .docker import DeadlineExceeded, created_container, error_text, run_bounded

# Where the Python packages of the usual images live: python:* (/usr/local/lib/python3.X/site-packages),
# NGC (/usr/local/lib/python3.X/dist-packages), Debian/Ubuntu (/usr/lib/python3/dist-packages),
# pytorch/pytorch and conda (/opt/conda/lib/python3.X/site-packages), and a venv at /opt/venv.
ROOTS = ("/usr/local/lib", "/usr/lib/python3", "/opt/conda/lib", "/opt/venv/lib")


class _Chunks(io.RawIOBase):
    """The archive call's stream of chunks as a file tarfile can read in stream mode."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks, self.pending = chunks, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending:
            try:
                self.pending = next(self.chunks)
            except StopIteration:
                return 0
        count = min(len(buffer), len(self.pending))
        buffer[:count] = self.pending[:count]
        self.pending = self.pending[count:]
        return count


# Where an image's torch keeps its CUDA kernels: torch/lib under each usual package directory.
_PYTHONS = tuple(f"python3.{minor}" for minor in range(8, 15))
TORCH_LIB_DIRS = ("/usr/lib/python3/dist-packages/torch/lib",) + tuple(
    f"{prefix}/{python}/{packages}/torch/lib"
    for python in _PYTHONS
    for prefix, packages in (("/opt/conda/lib", "site-packages"), ("/usr/local/lib", "dist-packages"),
                             ("/usr/local/lib", "site-packages"), ("/opt/venv/lib", "site-packages"))
)


@contextlib.contextmanager
def _created(client: Any, reference: str, timeout: float) -> Iterator[str]:
    """A container made from the image (never started, no network) for the archive calls, removed
    on every way out (probe.docker.created_container)."""
    try:
        run_bounded(lambda: client.api.inspect_image(reference), timeout * 2 + 1)
    except DeadlineExceeded:
        raise ScanInputError(f"--image {reference}: the Docker daemon did not answer within {timeout:g} s") from None
    except Exception as exc:
        raise ScanInputError(f"--image {reference}: {error_text(exc)} (pull it first: docker pull {reference})") from None
    entered = False
    try:
        with created_container(client, reference, "cudadoctor.scan", timeout) as container:
            entered = True
            yield container
    except DeadlineExceeded:
        if entered:
            raise
        raise ScanInputError(f"--image {reference}: the Docker daemon did not create a container to read it from within {timeout:g} s") from None
    except Exception as exc:
        if entered:
            raise
        raise ScanInputError(f"--image {reference}: cannot create a container to read it from ({error_text(exc)})") from None


def _read_roots(
    client: Any, reference: str, timeout: float, roots: tuple[str, ...], whole: Optional[float] = None
) -> list[ScannedFile]:
    """The shared objects under ``roots``; each archive call bounded by ``timeout`` (twice, plus a
    second), and all of them together by ``whole`` seconds when given (a command's deadline)."""
    files: list[tuple[str, ScannedFile]] = []
    records: dict[str, list[str]] = {}  # dist-info directory (image path) -> RECORD paths
    metadata: dict[str, tuple[Optional[str], Optional[str]]] = {}
    end = time.monotonic() + whole if whole is not None else None
    with _created(client, reference, timeout) as container:
        for root in roots:
            bound = timeout * 2 + 1 if end is None else min(timeout * 2 + 1, end - time.monotonic())
            def stream(at: str = root) -> None:
                _stream_root(client, container, at, files, records, metadata)

            try:
                run_bounded(stream, max(bound, 0.0))
            except DeadlineExceeded:
                raise ScanInputError(f"reading {root} out of {reference} did not finish within {timeout:g} s") from None
    return list(_owned(list(files), records, metadata))


def scan_image(reference: str, timeout: float) -> ScanSource:
    from .docker import connect

    client, facts = connect(timeout)
    if client is None:
        raise ScanInputError(f"--image {reference}: cannot reach the Docker daemon ({facts.error or facts.state})")
    try:
        return ScanSource(kind=IMAGE, location=reference, files=tuple(_read_roots(client, reference, timeout, ROOTS)))
    finally:
        try:
            client.close()
        except Exception:
            pass


def torch_arch_in_image(client: Any, reference: str, timeout: float) -> tuple[Optional[tuple[str, ...]], Optional[str]]:
    """(the arch list of the torch inside a local image, as TORCH_CUDA_ARCH_LIST words: "8.0",
    "9.0+PTX"; None when it holds no CUDA torch) read from its torch/lib/libtorch_cuda*.so, or
    (None, the one-line reason it could not be read)."""
    from ..binaries.judge import arch_list
    from .torch_probe import TORCH_CUDA_LIBRARIES

    try:
        files = _read_roots(client, reference, timeout, TORCH_LIB_DIRS, whole=timeout)
    except ScanInputError as exc:
        return None, str(exc)
    libraries = [f for f in files if os.path.basename(f.path) in TORCH_CUDA_LIBRARIES]
    broken = next((f for f in libraries if f.code is None), None)
    if broken is not None:
        return None, f"{broken.path}: {broken.error}"
    entries = [e for f in libraries if f.code is not None for e in f.code.entries]
    return (words_of(arch_list(entries)) or None) if entries else None, None


def words_of(listing: str) -> tuple[str, ...]:
    """torch.cuda.get_arch_list()'s form (sm_80 sm_90 compute_90) as TORCH_CUDA_ARCH_LIST words (8.0 9.0+PTX).
    Those words cannot say "PTX without machine code": PTX of an architecture the build has no SASS
    for is left out, so a GPU is never judged to have native code it lacks (at worst, JIT it could do)."""
    sass = {name[3:] for name in listing.split() if name.startswith("sm_") and name[3:].isdigit()}
    ptx = {name[8:] for name in listing.split() if name.startswith("compute_") and name[8:].isdigit()}
    return tuple(f"{d[:-1]}.{d[-1]}" + ("+PTX" if d in ptx else "") for d in sorted(sass, key=int))


def _stream_root(
    client: Any, container: str, root: str, files: list[tuple[str, ScannedFile]],
    records: dict[str, list[str]], metadata: dict[str, tuple[Optional[str], Optional[str]]],
) -> None:  # fmt: skip
    import docker.errors as errors

    try:
        chunks, _stat = client.api.get_archive(container, root, chunk_size=1 << 20)
    except errors.NotFound:
        return
    except errors.APIError as exc:
        raise ScanInputError(f"reading {root} out of the image failed: {error_text(exc)}") from None
    parent = root.rstrip("/").rsplit("/", 1)[0]
    try:
        with tarfile.open(fileobj=io.BufferedReader(_Chunks(iter(chunks)), 1 << 20), mode="r|") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                name = member.name[2:] if member.name.startswith("./") else member.name.lstrip("/")
                path = f"{parent}/{name}"
                directory, base = os.path.split(path)
                if directory.endswith(".dist-info") and base in ("RECORD", "METADATA"):
                    handle = tar.extractfile(member)
                    data = handle.read(MAX_RECORD if base == "RECORD" else MAX_METADATA) if handle else b""
                    if base == "RECORD":
                        records[directory] = list(record_lines(data))
                    else:
                        metadata[directory] = name_and_version(data)
                elif SHARED_OBJECT.search(base):
                    handle = tar.extractfile(member)
                    if handle is None:
                        continue
                    scanned = _read_member(handle, member.size, path)
                    if scanned is not None:
                        files.append((path, scanned))
    except (tarfile.TarError, EOFError, OSError, errors.APIError) as exc:
        raise ScanInputError(f"reading {root} out of the image failed: {error_text(exc)}") from None


def _read_member(handle: Any, size: int, path: str) -> Optional[ScannedFile]:
    """One tar member read front to back as it streams past; None when it is not an ELF file."""
    head = handle.read(4)
    if head != b"\x7fELF":
        return None
    pending = [head]

    def read(count: int) -> bytes:  # the 4 bytes already read, then the rest of the member
        return pending.pop() if pending else bytes(handle.read(count))

    try:
        return ScannedFile(path=path, package=None, version=None, code=read_forward(read, size))
    except BinaryFormatError as exc:
        return ScannedFile(path=path, package=None, version=None, code=None, error=str(exc))


def _owned(
    files: list[tuple[str, ScannedFile]], records: dict[str, list[str]], metadata: dict[str, tuple[Optional[str], Optional[str]]]
) -> Iterator[ScannedFile]:
    """Each file with the package whose RECORD lists it, shown relative to that site-packages."""
    owners: dict[str, tuple[str, Optional[str], str]] = {}
    for info, listed in records.items():
        site = os.path.dirname(info)
        name, version = metadata.get(info, (None, None))
        if name is None:
            name = os.path.basename(info)[: -len(".dist-info")].rsplit("-", 1)[0]
        for entry in listed:
            if SHARED_OBJECT.search(entry):
                owners[os.path.normpath(os.path.join(site, entry))] = (name, version, site)
    for path, scanned in files:
        owner = owners.get(os.path.normpath(path))
        if owner is None:
            yield scanned
        else:
            name, version, site = owner
            yield ScannedFile(path=os.path.relpath(path, site), package=name, version=version, code=scanned.code, error=scanned.error)
