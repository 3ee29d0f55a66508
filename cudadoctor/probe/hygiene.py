"""Read an image's start-up configuration and its sshd/Jupyter files without running it: create a
container (never started, no network), copy the files out with the Engine's archive call
(``GET /containers/{id}/archive``), remove the container. Every daemon call is bounded
(probe.docker.run_bounded), and so is what is read. Nothing raises: a failure is state "error".
"""

from __future__ import annotations

import io
import itertools
import tarfile
import time
from typing import Any, Iterable, Optional

from ..model.hygiene import SSHD_CONFIG, SSHD_DROPINS, ImageFile, ImageHygiene, jupyter_dirs_for
from .docker import DeadlineExceeded, created_container, error_text, run_bounded

FILE_LIMIT = 64 * 1024  # bytes kept of one file
MAX_FILES = 256  # files kept of all the paths read (sshd reads every drop-in; no real image has more)
ARCHIVE_LIMIT = 4 * 1024 * 1024  # bytes read of one archive answer (a directory with large files stops there)


def read_hygiene(client: Any, reference: str, timeout: float = 5.0) -> ImageHygiene:
    try:
        data = run_bounded(lambda: client.api.inspect_image(reference), timeout * 2 + 1)
    except DeadlineExceeded:
        return ImageHygiene(state="error", error=f"the Docker daemon did not answer within {timeout:g} s")
    except Exception as exc:
        return ImageHygiene(state="error", error=error_text(exc))
    raw_config = data.get("Config") if isinstance(data, dict) else None
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    user = str(config.get("User") or "")
    base = ImageHygiene(
        state="ok",
        user=user,
        entrypoint=_words(config.get("Entrypoint")),
        cmd=_words(config.get("Cmd")),
        exposed_ports=tuple(sorted(str(p) for p in (config.get("ExposedPorts") or {}))),
    )
    end = time.monotonic() + timeout * 2 + 1  # every archive call together
    try:
        with created_container(client, reference, "cudadoctor.hygiene", timeout) as container:
            files: list[ImageFile] = []
            missing: list[str] = []
            for path in (SSHD_CONFIG, SSHD_DROPINS) + jupyter_dirs_for(user):
                found = _copy_out(client, container, path, max(end - time.monotonic(), 0.0))
                if found is None:
                    missing.append(path)
                else:
                    files += found[: max(MAX_FILES - len(files), 0)]
        return ImageHygiene(
            state="ok", user=base.user, entrypoint=base.entrypoint, cmd=base.cmd, exposed_ports=base.exposed_ports,
            files=tuple(files), missing=tuple(missing),
        )
    except DeadlineExceeded:
        return _failed(base, f"the Docker daemon did not answer within {timeout:g} s while reading the image's files")
    except Exception as exc:
        return _failed(base, error_text(exc))


def _failed(base: ImageHygiene, why: str) -> ImageHygiene:
    return ImageHygiene(
        state="error", error=why, user=base.user, entrypoint=base.entrypoint, cmd=base.cmd, exposed_ports=base.exposed_ports
    )


def _copy_out(client: Any, container: str, path: str, seconds: float) -> Optional[list[ImageFile]]:
    """The regular files at ``path`` (a file, or a directory's files), or None when it is absent."""
    import docker.errors as errors

    def fetch() -> bytes:
        stream, _stat = client.api.get_archive(container, path)
        buffer = io.BytesIO()
        for chunk in stream:
            buffer.write(chunk)
            if buffer.tell() > ARCHIVE_LIMIT:
                break  # what was read so far is still a readable tar prefix
        return buffer.getvalue()

    try:
        raw = run_bounded(fetch, seconds)
    except errors.NotFound:
        return None
    return list(itertools.islice(_tar_files(raw, path), MAX_FILES))


def _tar_files(raw: bytes, path: str) -> Iterable[ImageFile]:
    """The archive's regular files, named by their path in the image (the archive names them from
    the last component of ``path``)."""
    parent = path.rstrip("/").rsplit("/", 1)[0]
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                handle = tar.extractfile(member)
                if handle is None:
                    continue
                data = handle.read(FILE_LIMIT + 1)
                name = member.name[2:] if member.name.startswith("./") else member.name.lstrip("/")
                yield ImageFile(
                    path=f"{parent}/{name}",
                    text=data[:FILE_LIMIT].decode("utf-8", "replace"),
                    truncated=len(data) > FILE_LIMIT,
                )
    except (tarfile.TarError, EOFError, OSError):  # cut at ARCHIVE_LIMIT: keep what was whole
        return


def _words(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, str) and value:
        return (value,)
    return ()
