"""Image hygiene, read from the image's configuration and files (never by running it): who it runs
as, whether it starts Jupyter without authentication, whether its sshd takes passwords.
The parsers are pure and follow the programs' own rules: sshd takes the first value it reads for
a keyword (Include pulls drop-ins in at that point, Match blocks apply only to the connections
they match); Jupyter's command line overrides its config files."""

from __future__ import annotations

import ast
import fnmatch
import json
import posixpath
import re
import shlex
from typing import Optional, Sequence

from ..model.findings import INFO, WARN, Finding
from ..model.hygiene import SSHD_CONFIG, SSHD_DROPINS, HygieneSettings, ImageFile, ImageHygiene
from ..model.record import record
from ..model.target import Target
from .context import CheckContext

SSHD_SOURCE = "OpenBSD sshd_config(5): first obtained value wins; Include; Match; defaults PermitRootLogin prohibit-password, PasswordAuthentication yes"
JUPYTER_SOURCE = "Jupyter Server / Notebook security docs: an empty token and no password disable authentication"
DOCKERFILE_SOURCE = "Dockerfile reference: USER (default root)"

_SHELLS = {"sh", "bash", "dash", "ash", "zsh"}
_SEPARATORS = {"&&", "||", ";", "|", "&"}


# --- the user ------------------------------------------------------------------------------


def runs_as_root(user: str) -> bool:
    """Config.User "" (no USER line), "root", "0", "root:group" or "0:gid"."""
    name = user.split(":", 1)[0].strip()
    return name in ("", "root", "0")


# --- sshd ------------------------------------------------------------------------------------


@record
class SshdValue:
    keyword: str  # lower case
    value: str  # lower case first argument
    where: str  # "/etc/ssh/sshd_config:12"
    match: Optional[str] = None  # the Match criteria the line is under; None: global


# sshd's own bound (servconf.c SERVCONF_MAX_DEPTH): a file included deeper than 16 levels stops
# sshd with "Too many recursive configuration includes", so an Include cycle never starts it.
MAX_INCLUDE_DEPTH = 16
# Files read through Include altogether, and lines read altogether: drop-ins that include each
# other's globs multiply at every level (N files, 16 levels: N**16 reads); no working
# configuration comes near either bound.
MAX_INCLUDED_READS = 512
MAX_LINES_READ = 100_000


@record
class SshdConfig:
    """The keyword lines in the order sshd reads them, and why sshd would refuse this
    configuration (None: it would start) or where the reading stopped (``cut``)."""

    lines: tuple[SshdValue, ...]
    refused: Optional[str] = None
    cut: Optional[str] = None


def sshd_lines(hygiene: ImageHygiene) -> list[SshdValue]:
    """Every keyword line of the image's sshd configuration in the order sshd reads it."""
    return list(sshd_config(hygiene).lines)


def sshd_config(hygiene: ImageHygiene) -> SshdConfig:
    """The image's sshd configuration read as sshd reads it, Includes expanded within sshd's
    depth bound and a bound on the files read."""
    main = hygiene.file(SSHD_CONFIG)
    if main is None:
        return SshdConfig(lines=())
    reader = _SshdReader({f.path: f for f in hygiene.under(SSHD_DROPINS)})
    reader.read(main, None, (main.path,))
    return SshdConfig(lines=tuple(reader.out), refused=reader.refused, cut=reader.cut)


class _SshdReader:
    def __init__(self, dropins: dict[str, ImageFile]) -> None:
        self.dropins = dropins
        self.out: list[SshdValue] = []
        self.refused: Optional[str] = None
        self.cut: Optional[str] = None
        self.reads = 0
        self.lines = 0
        self.globs: dict[str, list[str]] = {}

    def read(self, file: ImageFile, match: Optional[str], chain: tuple[str, ...]) -> None:
        current = match  # a Match in an included file ends with that file
        for number, raw in enumerate(file.text.splitlines(), 1):
            if self.refused is not None or self.cut is not None:
                return
            self.lines += 1
            if self.lines > MAX_LINES_READ:
                self.cut = f"more than {MAX_LINES_READ} lines read (at {file.path}:{number}); the rest was not read"
                return
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            found = re.match(r"^(\S+?)(?:\s*=\s*|\s+)(.*)$", line)
            if not found:
                continue
            keyword, rest = found.group(1).lower(), found.group(2).strip()
            if keyword == "match":
                current = rest
                continue
            if keyword == "include":
                self.include(rest, current, chain, f"{file.path}:{number}")
                continue
            value = rest.split()[0].strip('"').lower() if rest else ""
            self.out.append(SshdValue(keyword, value, f"{file.path}:{number}", current))

    def include(self, rest: str, current: Optional[str], chain: tuple[str, ...], where: str) -> None:
        for pattern in rest.split():
            pattern = pattern.strip('"')
            if not pattern.startswith("/"):
                pattern = posixpath.join("/etc/ssh", pattern)
            if pattern not in self.globs:
                self.globs[pattern] = sorted(p for p in self.dropins if fnmatch.fnmatch(p, pattern))
            for path in self.globs[pattern]:
                if path in chain:  # a cycle: sshd follows it to its depth bound, then stops
                    loop = " -> ".join(posixpath.basename(p) for p in chain[chain.index(path):] + (path,))
                    self.refused = (f"{where} includes {path} again ({loop}): sshd follows the loop to its limit of "
                                    f"{MAX_INCLUDE_DEPTH} nested Includes and stops with \"Too many recursive configuration includes\"")
                    return
                if len(chain) > MAX_INCLUDE_DEPTH:
                    self.refused = (f"{where}: Includes nested deeper than sshd's limit of {MAX_INCLUDE_DEPTH}; sshd stops "
                                    "with \"Too many recursive configuration includes\"")
                    return
                self.reads += 1
                if self.reads > MAX_INCLUDED_READS:
                    self.cut = f"more than {MAX_INCLUDED_READS} files read through Include (at {where}); the rest was not read"
                    return
                self.read(self.dropins[path], current, chain + (path,))
                if self.refused is not None or self.cut is not None:
                    return


def sshd_effective(lines: Sequence[SshdValue], keyword: str, default: str) -> tuple[str, str]:
    """(value, where) of a keyword for every connection: a `Match all` block's value (matching blocks
    override the global section), else the first global line, else sshd's default."""
    for line in lines:
        if line.keyword == keyword and line.match is not None and line.match.strip().lower() == "all":
            return line.value, line.where
    for line in lines:
        if line.keyword == keyword and line.match is None:
            return line.value, line.where
    return default, "sshd's default"


def sshd_problems(hygiene: ImageHygiene) -> list[str]:
    """Why the image's sshd accepts passwords or root with a password; empty: it does not (or its
    configuration stops sshd from starting: sshd_config(...).refused)."""
    config = sshd_config(hygiene)
    lines = list(config.lines)
    if config.refused is not None or (not lines and hygiene.file(SSHD_CONFIG) is None):
        return []
    password, password_at = sshd_effective(lines, "passwordauthentication", "yes")
    root, root_at = sshd_effective(lines, "permitrootlogin", "prohibit-password")
    pam, _ = sshd_effective(lines, "usepam", "no")
    kbd, kbd_at = sshd_effective(lines, "kbdinteractiveauthentication", "")
    if not kbd:
        kbd, kbd_at = sshd_effective(lines, "challengeresponseauthentication", "yes")
    problems = []
    if password == "yes":
        problems.append(f"PasswordAuthentication yes ({password_at})")
    if pam == "yes" and kbd == "yes":
        problems.append(f"keyboard-interactive passwords through PAM (KbdInteractiveAuthentication yes, {kbd_at})")
    takes_passwords = bool(problems)
    if root == "yes" and takes_passwords:
        problems.insert(0, f"PermitRootLogin yes ({root_at}): root can log in with a password")
    for line in lines:  # a Match block that turns them back on for some connections
        if line.match is not None and line.match.strip().lower() != "all" and (
            (line.keyword == "passwordauthentication" and line.value == "yes")
            or (line.keyword == "permitrootlogin" and line.value == "yes")
        ):
            problems.append(f"Match {line.match}: {line.keyword} yes ({line.where})")
    return problems


# --- Jupyter -----------------------------------------------------------------------------------


@record
class JupyterSettings:
    """What the image sets for Jupyter's authentication and address, and where."""

    started: bool  # the image's command starts a Jupyter server
    token: Optional[str]  # None: not set (Jupyter generates one)
    token_at: str
    password: Optional[str]  # a password or password hash
    ip: Optional[str]
    flags: tuple[str, ...] = ()  # the command-line words that set them, as written


def command_words(hygiene: ImageHygiene) -> list[str]:
    """ENTRYPOINT + CMD as the words that run: a shell's -c script split as the shell would."""
    argv = list(hygiene.entrypoint) + list(hygiene.cmd)
    words: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if posixpath.basename(word) in _SHELLS and "-c" in argv[i + 1: i + 3]:
            script_at = argv.index("-c", i + 1) + 1
            if script_at < len(argv):
                try:
                    words += shlex.split(argv[script_at], comments=True)
                except ValueError:
                    words += argv[script_at].split()
                i = script_at + 1
                continue
        words.append(word)
        i += 1
    return words


def _jupyter_args(words: list[str]) -> Optional[list[str]]:
    """The arguments of the first Jupyter server the words start, or None."""
    for i, word in enumerate(words):
        base = posixpath.basename(word)
        rest = words[i + 1:]
        if base in ("jupyter-lab", "jupyter-notebook", "jupyter-server", "jupyter-nbclassic"):
            return _until_separator(rest)
        if base == "jupyter" and rest and rest[0] in ("lab", "notebook", "server", "nbclassic"):
            return _until_separator(rest[1:])
        if base.startswith("python") and len(rest) >= 2 and rest[0] == "-m" and rest[1] in ("jupyter", "jupyterlab", "notebook", "jupyter_server"):
            tail = rest[2:]
            if rest[1] == "jupyter" and tail and tail[0] in ("lab", "notebook", "server", "nbclassic"):
                tail = tail[1:]
            return _until_separator(tail)
    return None


def _until_separator(words: list[str]) -> list[str]:
    out = []
    for word in words:
        if word in _SEPARATORS:
            break
        out.append(word)
    return out


def _unquote(value: str) -> str:
    # traitlets strips one pair of matching quotes from a command-line string (exec-form CMDs keep them)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


_TRAITS = {
    "token": ("notebookapp.token", "serverapp.token", "identityprovider.token"),
    "password": ("notebookapp.password", "serverapp.password", "passwordidentityprovider.hashed_password"),
    "ip": ("notebookapp.ip", "serverapp.ip", "ip"),
}


def _cli_settings(args: list[str]) -> dict[str, tuple[str, str]]:
    """trait -> (value, the word as written) from Jupyter's command line."""
    found: dict[str, tuple[str, str]] = {}
    i = 0
    while i < len(args):
        word = args[i]
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            written = word
            if not eq and i + 1 < len(args) and not args[i + 1].startswith("--"):
                value, written = args[i + 1], f"{word} {args[i + 1]}"
                i += 1
            for trait, names in _TRAITS.items():
                if name.lower() in names:
                    found[trait] = (_unquote(value), written)
        i += 1
    return found


_CONFIG_LINE = re.compile(
    r"^\s*c\.(NotebookApp|ServerApp|IdentityProvider|PasswordIdentityProvider)\.(token|password|hashed_password|ip)\s*=\s*(.+?)\s*$"
)


def _config_settings(files: Sequence[ImageFile]) -> dict[str, tuple[str, str]]:
    """trait -> (value, file:line) from the jupyter_*_config.py / .json files the image carries;
    a later file or line overrides an earlier one, as Jupyter loads them."""
    found: dict[str, tuple[str, str]] = {}
    for file in sorted(files, key=lambda f: f.path):
        name = posixpath.basename(file.path)
        if not fnmatch.fnmatch(name, "jupyter_*_config.*"):
            continue
        if name.endswith(".json"):
            try:
                data = json.loads(file.text)
            except ValueError:
                continue
            for section, values in (data.items() if isinstance(data, dict) else ()):
                if not isinstance(values, dict):
                    continue
                for key, value in values.items():
                    _config_value(found, f"{section}.{key}", value, file.path)
            continue
        for number, line in enumerate(file.text.splitlines(), 1):
            match = _CONFIG_LINE.match(line.split("  #", 1)[0])
            if not match:
                continue
            try:
                value = ast.literal_eval(match.group(3))
            except (ValueError, SyntaxError):
                continue
            _config_value(found, f"{match.group(1)}.{match.group(2)}", value, f"{file.path}:{number}")
    return found


def _config_value(found: dict[str, tuple[str, str]], name: str, value: object, where: str) -> None:
    if not isinstance(value, str):
        return
    for trait, names in _TRAITS.items():
        if name.lower() in names:
            found[trait] = (value, where)


def jupyter_settings(hygiene: ImageHygiene, config_files: Sequence[ImageFile]) -> JupyterSettings:
    args = _jupyter_args(command_words(hygiene))
    cli = _cli_settings(args) if args is not None else {}
    config = _config_settings(config_files)
    merged = {**config, **cli}  # the command line wins
    token = merged.get("token")
    password = merged.get("password")
    ip = merged.get("ip")
    return JupyterSettings(
        started=args is not None,
        token=token[0] if token else None,
        token_at=token[1] if token else "",
        password=password[0] if password else None,
        ip=ip[0] if ip else None,
        flags=tuple(v[1] for v in cli.values()),
    )


def jupyter_open(settings: JupyterSettings) -> bool:
    """No authentication: an empty token and no password (an unset token is generated at start)."""
    return settings.token == "" and not settings.password


def all_interfaces(ip: Optional[str]) -> bool:
    return ip in ("0.0.0.0", "*", "", "::", "[::]")


# --- what JSON reports carry -------------------------------------------------------------------


def deciding_settings(hygiene: ImageHygiene) -> HygieneSettings:
    """The settings the findings are decided on, without any file's text (no token, no hash)."""
    config = sshd_config(hygiene)
    lines = list(config.lines)
    present = hygiene.file(SSHD_CONFIG) is not None
    password, password_at = sshd_effective(lines, "passwordauthentication", "yes")
    root, root_at = sshd_effective(lines, "permitrootlogin", "prohibit-password")
    pam, _ = sshd_effective(lines, "usepam", "no")
    kbd, _ = sshd_effective(lines, "kbdinteractiveauthentication", "")
    if not kbd:
        kbd, _ = sshd_effective(lines, "challengeresponseauthentication", "yes")
    config_files = [f for f in hygiene.files if fnmatch.fnmatch(posixpath.basename(f.path), "jupyter_*_config.*")]
    jupyter = jupyter_settings(hygiene, config_files)
    return HygieneSettings(
        sshd_present=present,
        sshd_password_authentication=password if present else None,
        sshd_password_authentication_at=password_at if present else None,
        sshd_permit_root_login=root if present else None,
        sshd_permit_root_login_at=root_at if present else None,
        sshd_use_pam=pam if present else None,
        sshd_kbd_interactive_authentication=kbd if present else None,
        sshd_refused=config.refused,
        jupyter_started=jupyter.started,
        jupyter_token_set=jupyter.token is not None,
        jupyter_token_empty=jupyter.token == "",
        jupyter_token_at=jupyter.token_at or None,
        jupyter_password_set=bool(jupyter.password),
        jupyter_ip=jupyter.ip,
    )


def withheld(hygiene: ImageHygiene) -> ImageHygiene:
    """The hygiene facts as JSON reports carry them: each file's path without its text, and the
    deciding settings."""
    from ..model.record import replace

    files = tuple(replace(f, text="", text_withheld=True) for f in hygiene.files)
    return replace(hygiene, files=files, settings=deciding_settings(hygiene) if hygiene.state == "ok" else None)


# --- the check -------------------------------------------------------------------------------


def _published_on_loopback(target: Optional[Target], port: int) -> bool:
    """The --run line already publishes this container port, and only on loopback (a fix must not
    ask for what the line has)."""
    run = target.run if target is not None else None
    published = [p for p in run.ports if port in p.container_ports] if run is not None else []
    return bool(published) and not any(p.public for p in published)


def check_hygiene(ctx: CheckContext) -> list[Finding]:
    target = ctx.target
    image = target.image_facts if target else None
    hygiene = image.hygiene if image else None
    if image is None or hygiene is None or hygiene.state == "not-probed":
        return []
    ref = image.reference
    findings: list[Finding] = []
    run_user = target.run.user if target is not None and target.run is not None else None
    if runs_as_root(hygiene.user) and (run_user is None or runs_as_root(run_user)):
        shown = f"USER {hygiene.user}" if hygiene.user else "no USER line"
        findings.append(
            Finding(
                code="image-runs-as-root",
                severity=INFO,
                title=f"Image {ref} runs as root ({shown})",
                detail="Processes in the container run as root: a file written to a bind mount is root's on the host, "
                    "and an escape from the container starts as root.",
                hint="Add a user to the image's Dockerfile (`RUN useradd -m -u 1000 app` then `USER app`), or start "
                    f"the container as one: `docker run --user 1000:1000 ... {ref}`.",
                source=DOCKERFILE_SOURCE,
            )
        )
    if hygiene.state != "ok":
        findings.append(
            Finding(
                code="image-files-unread",
                severity=INFO,
                title=f"The files of {ref} could not be read: sshd and Jupyter settings were not checked",
                detail=hygiene.error or "",
                hint="Make the Docker daemon answer (a created container and the archive API are used; nothing runs).",
                source=DOCKERFILE_SOURCE,
            )
        )
        return findings
    config_files = [f for f in hygiene.files if fnmatch.fnmatch(posixpath.basename(f.path), "jupyter_*_config.*")]
    jupyter = jupyter_settings(hygiene, config_files)
    if jupyter_open(jupyter):
        where = " ".join(jupyter.flags) if jupyter.flags and jupyter.token_at in jupyter.flags else jupyter.token_at
        exposed = all_interfaces(jupyter.ip)
        how = "starts Jupyter" if jupyter.started else "configures Jupyter"
        findings.append(
            Finding(
                code="image-jupyter-open",
                severity=WARN,
                title=f"Image {ref} {how} without authentication" + (" on all interfaces" if exposed else ""),
                detail=f"The token is empty and no password is set ({where}): anyone who reaches the port runs code "
                    "in the container." + (f" It listens on {jupyter.ip or 'every address'}." if exposed else ""),
                hint="Drop the empty token (Jupyter then prints a token at start), or set a password hash "
                    "(`jupyter server password`, c.PasswordIdentityProvider.hashed_password)"
                    + ("." if _published_on_loopback(target, 8888) else "; publish the port on loopback only: "
                       "`-p 127.0.0.1:8888:8888`."),
                source=JUPYTER_SOURCE,
            )
        )
    refused = sshd_config(hygiene).refused
    if refused is not None:
        findings.append(
            Finding(
                code="image-sshd-config-refused",
                severity=INFO,
                title=f"The sshd configuration of {ref} would stop sshd from starting",
                detail=f"{refused}. Its password settings were not judged: sshd does not run with this configuration.",
                hint="Make the Include lines of /etc/ssh/sshd_config and its drop-ins form no loop (a drop-in "
                    "should not include sshd_config.d/* again), then check the image again.",
                source=SSHD_SOURCE,
            )
        )
    problems = sshd_problems(hygiene)
    if problems:
        findings.append(
            Finding(
                code="image-ssh-root-login",
                severity=WARN,
                title=f"Image {ref} has an sshd that accepts passwords" + (" for root" if "root can log in" in problems[0] else ""),
                detail="; ".join(problems) + ". sshd takes the first value it reads for a keyword (a drop-in included "
                    "before a line overrides it), and a Match block applies to the connections it matches.",
                hint="Set `PasswordAuthentication no`, `KbdInteractiveAuthentication no` and `PermitRootLogin "
                    "prohibit-password` (or `no`) before any Match block and before the Include of sshd_config.d "
                    "(or in the first drop-in), and log in with keys.",
                source=SSHD_SOURCE,
            )
        )
    return findings
