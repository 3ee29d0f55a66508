"""What an image's configuration and files say about how safely it starts: its user, its command,
and the sshd and Jupyter configuration files it carries, as the Docker daemon gave them (read
without running the image: a created container's files through the archive API). Facts only:
the judging is rules/hygiene.py's."""

from __future__ import annotations

from .record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# Where the files that matter live; directories are read whole (bounded), files one by one.
SSHD_CONFIG = "/etc/ssh/sshd_config"
SSHD_DROPINS = "/etc/ssh/sshd_config.d"
JUPYTER_CONFIG_DIRS = ("/etc/jupyter", "/usr/local/etc/jupyter", "/usr/etc/jupyter", "/root/.jupyter")


@record
class ImageFile:
    """One file read from the image: its path and its text (cut at the probe's limit). In JSON
    reports the text is withheld ("" and text_withheld true): it can hold tokens and password
    hashes; the settings that decide a finding are in ImageHygiene.settings."""

    path: str
    text: str
    truncated: bool = False
    text_withheld: bool = False


@record
class HygieneSettings:
    """The settings the hygiene findings are decided on, as JSON reports carry them (never a
    token's or a password hash's value): sshd's effective values and where each was set, and
    whether Jupyter's token and password are set."""

    sshd_present: bool = False
    sshd_password_authentication: Optional[str] = None  # "yes" / "no"
    sshd_password_authentication_at: Optional[str] = None  # "/etc/ssh/sshd_config:12" or "sshd's default"
    sshd_permit_root_login: Optional[str] = None
    sshd_permit_root_login_at: Optional[str] = None
    sshd_use_pam: Optional[str] = None
    sshd_kbd_interactive_authentication: Optional[str] = None
    sshd_refused: Optional[str] = None  # why sshd would not start with this configuration
    jupyter_started: bool = False
    jupyter_token_set: bool = False  # False: Jupyter generates a token at start
    jupyter_token_empty: bool = False  # set to "": no token at all
    jupyter_token_at: Optional[str] = None
    jupyter_password_set: bool = False
    jupyter_ip: Optional[str] = None


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
    settings: Optional[HygieneSettings] = None  # set in JSON reports only (report/payload.py)

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
