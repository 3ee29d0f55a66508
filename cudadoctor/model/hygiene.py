"""What an image's configuration and files say about how safely it starts: its user, its command,
and the sshd and Jupyter configuration files it carries, as the Docker daemon gave them (read
without running the image: a created container's files through the archive API). Facts only:
the judging is rules/hygiene.py's."""

from __future__ import annotations

from typing import Optional

from .record import record

# Where the files that matter live; directories are read whole (bounded), files one by one.
SSHD_CONFIG = "/etc/ssh/sshd_config"
SSHD_DROPINS = "/etc/ssh/sshd_config.d"
JUPYTER_CONFIG_DIRS = ("/etc/jupyter", "/usr/local/etc/jupyter", "/usr/etc/jupyter", "/root/.jupyter")


@record
class ImageFile:
    """One file read from the image: its path and its text (cut at the probe's limit)."""

    path: str
    text: str
    truncated: bool = False


@record
class ImageHygiene:
    """The image's start-up configuration and the files read from it."""

    state: str = "not-probed"  # "ok" | "error" | "not-probed"
    error: Optional[str] = None
    user: str = ""  # Config.User: "" means root
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    exposed_ports: tuple[str, ...] = ()  # "8888/tcp"
    files: tuple[ImageFile, ...] = ()
    missing: tuple[str, ...] = ()  # paths asked for that the image does not have

    def file(self, path: str) -> Optional[ImageFile]:
        for item in self.files:
            if item.path == path:
                return item
        return None

    def under(self, directory: str) -> tuple[ImageFile, ...]:
        prefix = directory.rstrip("/") + "/"
        return tuple(f for f in self.files if f.path.startswith(prefix))


def jupyter_dirs_for(user: str) -> tuple[str, ...]:
    """The Jupyter config directories to read: the system ones, root's, and the image user's home."""
    name = user.split(":", 1)[0].strip()
    extra = (f"/home/{name}/.jupyter",) if name and not name.isdigit() and name != "root" and "/" not in name else ()
    return JUPYTER_CONFIG_DIRS + extra
