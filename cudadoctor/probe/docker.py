"""Read the Docker Engine and the NVIDIA Container Toolkit on this host.

The docker SDK is imported here only, so a plain ``check`` never loads it. Every call to the
daemon is bounded by a deadline for the whole call, not per read: the SDK's socket timeout alone
lets a daemon that trickles a byte a second stretch a call forever, and one that accepts the
connection and never answers must not hang us either. The calls run in a worker thread that is
abandoned at the deadline. What the daemon answers is type-checked before use: an answer of the
wrong shape is the state "unexpected-answer", not a crash. Every failure becomes a DockerFacts
state with the error's own text; nothing here raises.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import socket
import threading
import time
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

from ..model.facts import DockerFacts
from ..model.record import replace

DEFAULT_TIMEOUT_S = 5.0
DEFAULT_SOCKET = "unix:///var/run/docker.sock"
CDI_SPEC_DIRS = ("/etc/cdi", "/var/run/cdi")
CDI_GPU_KIND = "nvidia.com/gpu"
# `kind: nvidia.com/gpu` (YAML) or `"kind": "nvidia.com/gpu"` (JSON), read as text.
_CDI_KIND_LINE = re.compile(r"""["']?kind["']?\s*:\s*["']?""" + re.escape(CDI_GPU_KIND) + r"""["']?""")
TOOLKIT_BINARIES = (
    "nvidia-container-runtime-hook",  # what Docker's --gpus driver runs (registered only if on dockerd's PATH)
    "nvidia-container-runtime",
    "nvidia-container-cli",
    "nvidia-ctk",
    "nvidia-cdi-hook",
    "nvidia-container-toolkit",
)
TOOLKIT_CONFIG = "/etc/nvidia-container-runtime/config.toml"
_EXTRA_PATH = ("/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/bin", "/sbin")

STATE_OK = "ok"
STATE_UNREACHABLE = "unreachable"
STATE_PERMISSION = "permission-denied"
STATE_TIMEOUT = "timeout"
STATE_ERROR = "error"
STATE_UNEXPECTED = "unexpected-answer"  # the daemon answered, but not with what the Engine API defines

T = TypeVar("T")


class DeadlineExceeded(Exception):
    pass


def run_bounded(fn: Callable[[], T], seconds: float, tick: Optional[Callable[[float], None]] = None) -> T:
    """Run ``fn`` in a daemon thread; raise DeadlineExceeded if it has not returned within ``seconds``.
    ``tick(elapsed)`` is called about every half second while waiting (a progress line).
    The thread is abandoned (the process exits without waiting for it)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc

    worker = threading.Thread(target=target, name="cudadoctor-docker", daemon=True)
    start = time.monotonic()
    deadline = start + max(seconds, 0.0)
    worker.start()
    while worker.is_alive():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded()
        worker.join(min(remaining, 0.5) if tick is not None else remaining)
        if tick is not None and worker.is_alive():
            tick(time.monotonic() - start)
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


# Removing a container made to read an image gets its own bound: the command's deadline may be
# spent already (that is often why it is being removed), and a container must not be left behind.
REMOVE_TIMEOUT_S = 15.0
# A create still in flight at the deadline (a daemon copying a large image's files into the new
# container's layer, as the vfs storage driver does, or one that never answers) is not waited
# for: a detached process removes the container by its name once the daemon has made it,
# trying for at most this long, and ends.
CREATE_WAIT_S = 90.0
# What that process runs: argv[1] the daemon's address, argv[2] the container's name, argv[3]
# the seconds to keep trying. It stops early when the daemon cannot be reached at all.
_REAPER = """
import sys, time
import docker, docker.errors
host, name, until = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
while time.monotonic() < until:
    try:
        client = docker.DockerClient(base_url=host, timeout=30)
        try:
            client.api.remove_container(name, force=True, v=True)
            break
        finally:
            client.close()
    except docker.errors.NotFound:
        time.sleep(0.5)
    except docker.errors.APIError:
        time.sleep(0.5)
    except Exception:
        break
"""


@contextlib.contextmanager
def created_container(client: Any, reference: str, label: str, timeout: float) -> Iterator[str]:
    """A container made from the image (never started, no network) for the archive calls; removed
    on every way out: an error, a deadline, a signal's SystemExit. It is named before it is
    created, so one whose creation outlived ``timeout`` (the daemon may still make it after we
    stop waiting) is removed by its name by a detached process once made (remove_later)."""
    word = label.rsplit(".", 1)[-1]
    name = f"cudadoctor-{word}-{os.getpid()}-{secrets.token_hex(6)}"
    done = threading.Event()
    # The SDK's socket timeout (the command's --timeout, as small as 0.1 s) would give up on a
    # create or a removal the daemon still carries out: every call here is bounded by
    # run_bounded instead, so the socket may wait as long as a removal may take.
    api = client.api
    previous = getattr(api, "timeout", None)
    try:
        api.timeout = max(float(previous or 0), REMOVE_TIMEOUT_S + 5)
    except (AttributeError, TypeError, ValueError):
        pass

    def create() -> Any:
        try:
            return client.api.create_container(
                image=reference, entrypoint=[], command=[f"/cudadoctor-{word}-never-started"],
                network_disabled=True, labels={label: "1"}, name=name,
            )
        finally:
            done.set()

    try:
        answer = run_bounded(create, timeout)
        yield str(answer["Id"]) if isinstance(answer, dict) and answer.get("Id") else name
    finally:
        if done.is_set():
            remove_container(client, name)
        else:  # the daemon may still make it after this command has ended: remove it then
            remove_later(name)
        try:
            api.timeout = previous  # the command's other calls keep the caller's socket timeout
        except AttributeError:
            pass


def remove_later(name: str) -> None:
    """Start a detached process that removes the container ``name`` once the daemon has created
    it (trying for at most CREATE_WAIT_S seconds), so that this command need not wait for it."""
    import subprocess
    import sys

    try:
        subprocess.Popen(
            [sys.executable, "-c", _REAPER, docker_endpoint(), name, str(CREATE_WAIT_S)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
    except OSError:  # no process can be started: the label still names the container
        pass


def remove_container(client: Any, container: str) -> None:
    """Remove a container this process created (by id or name), bounded; an absent one is fine."""
    try:
        run_bounded(lambda: client.api.remove_container(container, force=True, v=True), REMOVE_TIMEOUT_S)
    except Exception:  # absent (never created), or the daemon is gone: nothing else to do from here
        pass


def docker_endpoint(environ: Optional[dict[str, str]] = None) -> str:
    env = os.environ if environ is None else environ
    return env.get("DOCKER_HOST") or DEFAULT_SOCKET


def _chain(exc: BaseException) -> Iterable[BaseException]:
    seen = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        for attr in ("reason", "original_error"):  # urllib3 keeps the cause here, not in __cause__
            inner = getattr(current, attr, None)
            if isinstance(inner, BaseException) and id(inner) not in seen:
                yield inner
        current = current.__cause__ or current.__context__


def classify_error(exc: BaseException) -> str:
    """One word for what went wrong talking to the daemon."""
    for link in _chain(exc):
        if isinstance(link, PermissionError) or getattr(link, "errno", None) in (errno.EACCES, errno.EPERM):
            return STATE_PERMISSION
    for link in _chain(exc):
        if isinstance(link, (socket.timeout, TimeoutError)) or "timed out" in str(link).lower():
            return STATE_TIMEOUT
    for link in _chain(exc):
        if isinstance(link, (FileNotFoundError, ConnectionError)):
            return STATE_UNREACHABLE
    text = str(exc)
    if "Permission denied" in text:
        return STATE_PERMISSION
    if "Connection refused" in text or "No such file" in text or "Connection aborted" in text:
        return STATE_UNREACHABLE
    return STATE_ERROR


def error_text(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


def connect(timeout: float = DEFAULT_TIMEOUT_S, cdi_dirs: Optional[tuple[str, ...]] = None) -> tuple[Optional[Any], DockerFacts]:
    """Open a client to the daemon DOCKER_HOST names (or the default socket) and read its
    version and info. Returns (client or None, facts). The host's toolkit files and CDI specs are
    read under $CUDADOCTOR_SYSROOT when it is set (a fixture tree), like the system probe's."""
    host = docker_endpoint()
    local = host.startswith("unix://")
    base = DockerFacts(host=host, daemon_local=local, timeout_s=timeout)
    host_files = _host_files(cdi_dirs if cdi_dirs is not None else tuple(_rooted(d) for d in CDI_SPEC_DIRS)) if local else {}
    try:
        import docker  # heavy: only when a Docker check runs
    except Exception as exc:
        return None, _replace(base, state=STATE_ERROR, error=f"cannot import the docker SDK: {exc}", **host_files)

    def talk() -> tuple[Any, Any, Any]:
        client = docker.from_env(timeout=max(timeout, 0.1))
        return client, client.version(), client.info()

    try:
        client, version, info = run_bounded(talk, timeout)
    except DeadlineExceeded:
        return None, _replace(
            base, state=STATE_TIMEOUT, error=f"the Docker daemon at {host} did not answer within {timeout:g} s", **host_files
        )
    except Exception as exc:
        return None, _replace(base, state=classify_error(exc), error=error_text(exc), **host_files)
    if not isinstance(version, dict) or not isinstance(info, dict):
        close_quietly(client)
        said = f"/version answered {_json_kind(version)} and /info answered {_json_kind(info)}; the Engine API answers objects"
        return None, _replace(base, state=STATE_UNEXPECTED, error=said, **host_files)
    runtimes = info.get("Runtimes")
    spec_dirs = info.get("CDISpecDirs")
    facts = _replace(
        base,
        state=STATE_OK,
        server_version=scalar_text(version.get("Version")),
        api_version=scalar_text(version.get("ApiVersion")),
        runtimes=tuple(sorted(scalar_text(name) or "?" for name in runtimes)) if isinstance(runtimes, dict) else (),
        default_runtime=scalar_text(info.get("DefaultRuntime")),
        os_type=scalar_text(info.get("OSType")),
        architecture=scalar_text(info.get("Architecture")),
        **host_files,
    )
    if isinstance(spec_dirs, list) and spec_dirs and local:
        dirs = tuple(_rooted(d) for d in (scalar_text(d) for d in spec_dirs[:32]) if d)
        facts = _replace(facts, **_cdi(dirs))
    return client, facts


def _json_kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def close_quietly(client: Any) -> None:
    if client is not None:
        try:
            client.close()
        except Exception:
            pass


def scalar_text(value: Any, limit: int = 200) -> Optional[str]:
    """A daemon's scalar as text (at most ``limit`` characters); anything else (a list, an object) is unknown."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value == "":
        return None
    if isinstance(value, int) and value.bit_length() > 256:  # str() refuses 4300 digits
        return None
    text = value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _replace(facts: DockerFacts, **changes: Any) -> DockerFacts:

    return replace(facts, **changes)


# --- files on this host ----------------------------------------------------------------------


def _rooted(path: str) -> str:
    """A host path under $CUDADOCTOR_SYSROOT when one is set, else the path itself."""
    from .system import SYSROOT_ENV

    root = os.environ.get(SYSROOT_ENV)
    return os.path.join(root, path.lstrip("/")) if root and root != "/" else path


def _host_files(cdi_dirs: tuple[str, ...]) -> dict[str, Any]:
    found = {}
    found.update(_cdi(cdi_dirs))
    found.update(_toolkit())
    return found


def _cdi(dirs: tuple[str, ...]) -> dict[str, Any]:
    """CDI spec files that declare the ``nvidia.com/gpu`` kind (YAML or JSON, read as text)."""
    specs = []
    for directory in dirs:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if not name.endswith((".yaml", ".yml", ".json")):
                continue
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read(1_000_000)
            except OSError:
                continue
            if _CDI_KIND_LINE.search(text):
                specs.append(path)
    return {"cdi_spec_dirs": dirs, "cdi_nvidia_specs": tuple(specs)}


def _toolkit() -> dict[str, Any]:
    from .system import SYSROOT_ENV

    # Under a fixture tree only its own bin directories count: this shell's PATH is the real host's.
    searched = [*_EXTRA_PATH] if os.environ.get(SYSROOT_ENV) else [os.environ.get("PATH", ""), *_EXTRA_PATH]
    path = os.pathsep.join(_rooted(d) if d in _EXTRA_PATH else d for d in searched)
    binaries = []
    for name in TOOLKIT_BINARIES:
        found = shutil.which(name, path=path)
        if found:
            binaries.append(found)
    config, mode, disable = None, None, None
    try:
        with open(_rooted(TOOLKIT_CONFIG), encoding="utf-8", errors="replace") as handle:
            text = handle.read(1_000_000)
        config = _rooted(TOOLKIT_CONFIG)
        mode_match = re.search(r'^\s*mode\s*=\s*"([^"]*)"', text, re.MULTILINE)
        mode = mode_match.group(1) if mode_match else None
        disable_match = re.search(r"^\s*disable-require\s*=\s*(true|false)", text, re.MULTILINE)
        disable = disable_match.group(1) == "true" if disable_match else None
    except OSError:
        pass
    return {
        "toolkit_binaries": tuple(dict.fromkeys(binaries)),
        "toolkit_config": config,
        "toolkit_mode": mode,
        "toolkit_disable_require": disable,
    }
