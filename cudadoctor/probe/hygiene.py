"""Read an image's start-up configuration and its sshd/Jupyter files without running it: create a
container (never started, no network), copy the files out with the Engine's archive call
(``GET /containers/{id}/archive``), remove the container. Every daemon call is bounded
(probe.docker.run_bounded), and so is what is read. Nothing raises: a failure is state "error".
"""

from __future__ import annotations

import io
import tarfile
from typing import Any, Iterable, Optional

from ..model.hygiene import SSHD_CONFIG, SSHD_DROPINS, ImageFile, ImageHygiene, jupyter_dirs_for
from .docker import DeadlineExceeded, error_text, run_bounded

FILE_LIMIT = 64 * 1024  # bytes kept of one file
ARCHIVE_LIMIT = 4 * 1024 * 1024  # bytes read of one archive answer (a directory with large files stops there)
# The command the created container is given: it is never started, but the Engine wants one when
# the image has neither CMD nor ENTRYPOINT (a FROM scratch image).
_PLACEHOLDER = ["/cudadoctor-hygiene-never-started"]


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
    container: Optional[str] = None
    try:
        created = run_bounded(
            lambda: client.api.create_container(
                image=reference,
                entrypoint=[],
                command=_PLACEHOLDER,
                network_disabled=True,
                labels={"cudadoctor.hygiene": "1"},
            ),
            timeout * 2 + 1,
        )
        container = str(created["Id"])
        files: list[ImageFile] = []
        missing: list[str] = []
        for path in (SSHD_CONFIG, SSHD_DROPINS) + jupyter_dirs_for(user):
            found = _copy_out(client, container, path, timeout)
            if found is None:
                missing.append(path)
            else:
                files += found
        return ImageHygiene(
            state="ok", user=base.user, entrypoint=base.entrypoint, cmd=base.cmd, exposed_ports=base.exposed_ports,
            files=tuple(files), missing=tuple(missing),
        )
    except DeadlineExceeded:
        return _failed(base, f"the Docker daemon did not answer within {timeout:g} s while reading the image's files")
    except Exception as exc:
        return _failed(base, error_text(exc))
    finally:
        if container is not None:
            _remove(client, container, timeout)


def _failed(base: ImageHygiene, why: str) -> ImageHygiene:
    return ImageHygiene(
        state="error", error=why, user=base.user, entrypoint=base.entrypoint, cmd=base.cmd, exposed_ports=base.exposed_ports
    )


def _remove(client: Any, container: str, timeout: float) -> None:
    try:
        run_bounded(lambda: client.api.remove_container(container, force=True, v=True), timeout * 2 + 1)
    except Exception:  # the label names it; nothing else to do from here
        pass


def _copy_out(client: Any, container: str, path: str, timeout: float) -> Optional[list[ImageFile]]:
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
        raw = run_bounded(fetch, timeout * 2 + 1)
    except errors.NotFound:
        return None
    return list(_tar_files(raw, path))


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
