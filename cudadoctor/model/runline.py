"""A `docker run` command line, parsed once into a frozen RunLine. Pure.

Quoting is a POSIX shell's (shlex). The grammar is the Docker CLI's: ``docker run`` or ``docker
container run`` (after the docker command's own options, optionally behind ``sudo``), then
options, then the image, then the command. Options follow pflag: ``--flag=value`` or ``--flag
value`` for a flag that takes a value, ``--flag`` or ``--flag=true|false`` for a boolean, short
flags grouped (``-it``, ``-itd``), the last of a group may take a value (``-itp 8888:8888``,
``-p8888:8888``), and ``--`` ends the options. Every flag that takes a value must be known, or
the image could not be told from a value: an unknown flag is an error, as it is for Docker.
"""

from __future__ import annotations

import re
import shlex

from .numbers import NumberError, parse_decimal, parse_int
from .record import record
from .text import quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


class RunLineError(ValueError):
    """The command line is not a `docker run` Docker would accept; the message says what to fix."""


# `docker run` / `docker container run` (and `create`) flags that take a value, from the Docker
# CLI's container options (cli/command/container/opts.go, run.go, create.go). Long name -> short.
VALUE_FLAGS: dict[str, Optional[str]] = {
    "add-host": None, "annotation": None, "attach": "a", "blkio-weight": None, "blkio-weight-device": None,
    "cap-add": None, "cap-drop": None, "cgroup-parent": None, "cgroupns": None, "cidfile": None,
    "cpu-count": None, "cpu-percent": None, "cpu-period": None, "cpu-quota": None, "cpu-rt-period": None,
    "cpu-rt-runtime": None, "cpu-shares": "c", "cpus": None, "cpuset-cpus": None, "cpuset-mems": None,
    "detach-keys": None, "device": None, "device-cgroup-rule": None, "device-read-bps": None,
    "device-read-iops": None, "device-write-bps": None, "device-write-iops": None, "dns": None,
    "dns-opt": None, "dns-option": None, "dns-search": None, "domainname": None, "entrypoint": None,
    "env": "e", "env-file": None, "expose": None, "gpus": None, "group-add": None, "health-cmd": None,
    "health-interval": None, "health-retries": None, "health-start-interval": None,
    "health-start-period": None, "health-timeout": None, "hostname": "h", "io-maxbandwidth": None,
    "io-maxiops": None, "ip": None, "ip6": None, "ipc": None, "isolation": None, "kernel-memory": None,
    "label": "l", "label-file": None, "link": None, "link-local-ip": None, "log-driver": None,
    "log-opt": None, "mac-address": None, "memory": "m", "memory-reservation": None, "memory-swap": None,
    "memory-swappiness": None, "mount": None, "name": None, "net": None, "net-alias": None,
    "network": None, "network-alias": None, "oom-score-adj": None, "pid": None, "pids-limit": None,
    "platform": None, "publish": "p", "pull": None, "restart": None, "runtime": None, "security-opt": None,
    "shm-size": None, "stop-signal": None, "stop-timeout": None, "storage-opt": None, "sysctl": None,
    "tmpfs": None, "ulimit": None, "user": "u", "userns": None, "uts": None, "volume": "v",
    "volume-driver": None, "volumes-from": None, "workdir": "w",
}  # fmt: skip
BOOL_FLAGS: dict[str, Optional[str]] = {
    "detach": "d", "disable-content-trust": None, "help": None, "init": None, "interactive": "i",
    "no-healthcheck": None, "oom-kill-disable": None, "privileged": None, "publish-all": "P",
    "quiet": "q", "read-only": None, "rm": None, "sig-proxy": None, "tty": "t", "use-api-socket": None,
}  # fmt: skip
# The docker command's own options, before the subcommand.
_GLOBAL_VALUE = {"host": "H", "context": "c", "config": None, "log-level": "l", "tlscacert": None, "tlscert": None, "tlskey": None}
_GLOBAL_BOOL = {"debug": "D", "tls": None, "tlsverify": None}

_SHORT_VALUE = {s: long for long, s in VALUE_FLAGS.items() if s}
_SHORT_BOOL = {s: long for long, s in BOOL_FLAGS.items() if s}
_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?) ?([kKmMgGtTpP])?[iI]?[bB]?\Z", re.ASCII)
# Docker stores sizes as int64 bytes: anything larger is not a size it reads.
_MAX_SIZE = 2**63 - 1


@record
class Port:
    """One --publish: ``[host_ip:][host_port:]container_port[/proto]`` (a range counts as its ports)."""

    text: str
    host_ip: str  # "" = every interface
    host_port: str  # "" = a random port
    container_ports: tuple[int, ...]
    proto: str = "tcp"

    @property
    def public(self) -> bool:
        return self.host_ip in ("", "0.0.0.0", "::", "[::]")


@record
class GpuRequest:
    """One --gpus value as Docker reads it (CSV fields: a count, device=, capabilities=, ...)."""

    text: str
    count: Optional[int]  # -1 = all; None = by device IDs
    device_ids: tuple[str, ...] = ()


@record
class RunLine:
    """What the launch line asks Docker for."""

    text: str
    image: str
    command: tuple[str, ...] = ()
    gpus: tuple[GpuRequest, ...] = ()
    devices: tuple[str, ...] = ()
    runtime: Optional[str] = None
    env: tuple[tuple[str, str], ...] = ()  # -e NAME=value (NAME alone: passed from the caller's environment)
    ipc: Optional[str] = None
    shm_size_bytes: Optional[int] = None
    ports: tuple[Port, ...] = ()
    publish_all: bool = False
    volumes: tuple[str, ...] = ()  # -v / --volume
    mounts: tuple[str, ...] = ()  # --mount
    volumes_from: tuple[str, ...] = ()
    tmpfs: tuple[str, ...] = ()
    user: Optional[str] = None
    network: Optional[str] = None
    remove: bool = False  # --rm
    ulimits: tuple[str, ...] = ()  # --ulimit memlock=-1, ...
    privileged: bool = False  # --privileged (every host device, /dev/infiniband included)

    def env_value(self, name: str) -> Optional[str]:
        found = None
        for key, value in self.env:
            if key == name:
                found = value
        return found

    @property
    def cdi_gpus(self) -> tuple[str, ...]:
        """The GPUs named through CDI (--device nvidia.com/gpu=0): their IDs, "all" included."""
        out = []
        for device in self.devices:
            kind, eq, name = device.partition("=")
            if eq and kind == "nvidia.com/gpu":
                out.append(name)
        return tuple(out)

    def gpus_requested(self, image_env: Optional[str] = None) -> tuple[tuple[str, ...], Optional[int], bool]:
        """(device IDs named, a count asked for, whether "all" was asked) over --gpus, CDI names and,
        under --runtime nvidia, NVIDIA_VISIBLE_DEVICES (the line's -e first, else ``image_env``)."""
        ids: list[str] = []
        count: Optional[int] = None
        everything = False
        for request in self.gpus:
            ids += request.device_ids
            if request.count == -1:
                everything = True
            elif request.count is not None:
                count = max(count or 0, request.count)
        for name in self.cdi_gpus:
            if name == "all":
                everything = True
            else:
                ids.append(name)
        if self.runtime == "nvidia" and not self.gpus:
            visible = self.env_value("NVIDIA_VISIBLE_DEVICES") or image_env
            if visible == "all":
                everything = True
            elif visible and visible not in ("none", "void"):
                ids += [v.strip() for v in visible.split(",") if v.strip()]
        return tuple(ids), count, everything

    @property
    def dev_shm_mounted(self) -> bool:
        """Something is mounted on /dev/shm (-v, --mount or --tmpfs): its size is not Docker's default."""
        for volume in self.volumes:
            parts = volume.split(":")
            if len(parts) >= 2 and parts[1] == "/dev/shm":
                return True
        for mount in self.mounts:
            options = dict(f.partition("=")[::2] for f in mount.split(","))
            if any(options.get(k) == "/dev/shm" for k in ("target", "dst", "destination")):
                return True
        return any(t.split(":", 1)[0] == "/dev/shm" for t in self.tmpfs)


def parse_size(text: str) -> int:
    """Docker's size grammar (RAMInBytes): 64m, 1g, 1.5G, 2gb, 1024 — powers of 1024; raises RunLineError."""
    found = _SIZE.match(text.strip())
    if not found:
        raise RunLineError(f"--shm-size {text!r} is not a size Docker reads (such as 64m, 1g or 8gb)")
    power = " kmgtp".index((found.group(2) or " ").lower())
    try:
        value = parse_decimal(found.group(1), "--shm-size")
    except NumberError as exc:
        raise RunLineError(str(exc)) from None
    size = value * 1024**power
    if not size <= _MAX_SIZE:
        raise RunLineError(f"--shm-size {quoted(text)} is larger than Docker reads (at most 8 EiB)")
    return int(size)


def parse_port(text: str) -> Port:
    """``-p`` as Docker reads it; raises RunLineError."""
    spec, _, proto = text.partition("/")
    host_ip = ""
    if spec.startswith("["):  # [::1]:8888:8888
        end = spec.find("]")
        if end < 0:
            raise RunLineError(f"-p {text!r}: unclosed [ in the host address")
        host_ip, spec = spec[: end + 1], spec[end + 1:].lstrip(":")
        parts = spec.split(":")
        if len(parts) == 1:
            parts = ["", parts[0]]
    else:
        parts = spec.split(":")
        if len(parts) == 3:
            host_ip = parts.pop(0)
        elif len(parts) > 3:
            raise RunLineError(f"-p {text!r}: expected [ip:][hostPort:]containerPort[/protocol]")
    host_port, container = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0])
    found = re.match(r"^([0-9]+)(?:-([0-9]+))?\Z", container, re.ASCII)
    if not found:
        raise RunLineError(f"-p {quoted(text)}: the container port {quoted(container)} is not a port or range")
    try:
        first = parse_int(found.group(1), "the container port", max_digits=5, maximum=65535)
        last = parse_int(found.group(2) or found.group(1), "the container port", max_digits=5, maximum=65535)
    except NumberError as exc:
        raise RunLineError(f"-p {quoted(text)}: {exc}; ports run from 1 to 65535") from None
    if not 0 < first <= last <= 65535:
        raise RunLineError(f"-p {text!r}: ports run from 1 to 65535")
    return Port(text=text, host_ip=host_ip, host_port=host_port, container_ports=tuple(range(first, last + 1)), proto=proto or "tcp")


def parse_gpus(text: str) -> GpuRequest:
    """``--gpus`` as the Docker CLI reads it (opts/gpus.go); raises RunLineError."""
    import csv

    try:
        fields = next(csv.reader([text]))
    except (csv.Error, StopIteration):
        raise RunLineError(f"--gpus {text!r} is not a list Docker reads") from None
    count: Optional[int] = None
    devices: tuple[str, ...] = ()
    seen: set[str] = set()
    for field in fields:
        key, eq, value = field.partition("=")
        if key in seen or (not eq and "count" in seen):
            raise RunLineError(f"--gpus {text!r}: {key!r} is given twice")
        seen.add(key if eq else "count")
        if not eq or key == "count":
            word = value if eq else key
            if word == "all":
                count = -1
            else:
                try:
                    count = parse_int(word, "the count", max_digits=9)
                except NumberError:
                    raise RunLineError(f"--gpus {quoted(text)}: the count must be \"all\" or a number in ASCII digits") from None
        elif key == "device":
            devices = tuple(v for v in value.split(",") if v)
        elif key not in ("driver", "capabilities", "options"):
            raise RunLineError(f"--gpus {text!r}: unexpected key {key!r}")
    if devices and count is not None:
        raise RunLineError(
            f"--gpus {text!r}: Docker reads this as device IDs plus a count, which the daemon refuses; quote the "
            "list so the comma stays inside one field: --gpus '\"device=0,1\"'"
        )
    if not devices and count is None:
        count = 1
    return GpuRequest(text=text, count=count, device_ids=devices)


def _words(text: str) -> list[str]:
    try:
        words = shlex.split(text.replace("\\\n", " "), comments=False)
    except ValueError as exc:
        raise RunLineError(f"the command line does not parse as a shell would ({exc}): check its quotes") from None
    return words


def _strip_to_run(words: list[str]) -> list[str]:
    """The words after `docker [global options] run` / `docker container run`."""
    i = 0
    while i < len(words):  # `sudo -E`, `env VAR=1`, `exec`, `command` in front of docker
        word = words[i]
        if word in ("sudo", "env", "command", "exec", "nohup", "time"):
            i += 1
            while i < len(words) and words[i].startswith("-") and words[i] != "--":
                i += 2 if words[i] in ("-u", "-g", "-C", "-h") else 1  # sudo's options that take a value
            continue
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            i += 1
            continue
        break
    if i >= len(words) or words[i].rsplit("/", 1)[-1] != "docker":
        raise RunLineError("expected a `docker run ...` command line (it starts with docker)")
    i += 1
    while i < len(words) and words[i].startswith("-"):
        name, eq, _ = words[i].lstrip("-").partition("=")
        long = words[i].startswith("--")
        takes = name in _GLOBAL_VALUE if long else any(name == s for s in _GLOBAL_VALUE.values() if s)
        known = takes or (name in _GLOBAL_BOOL if long else any(name == s for s in _GLOBAL_BOOL.values() if s))
        if not known:
            raise RunLineError(f"unknown docker option {words[i]!r} before the subcommand")
        i += 1 if (eq or not takes) else 2
    if words[i: i + 1] == ["run"]:
        return words[i + 1:]
    if words[i: i + 2] == ["container", "run"]:
        return words[i + 2:]
    found = " ".join(words[i: i + 2]) or "nothing"
    raise RunLineError(f"expected `docker run` or `docker container run`, found `docker {found}`")


def parse_run_line(text: str) -> RunLine:
    """The launch line's image, command and the options cudadoctor judges; raises RunLineError."""
    args = _strip_to_run(_words(text))
    values: dict[str, list[str]] = {}
    flags: dict[str, bool] = {}
    i = 0
    image: Optional[str] = None
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if name in VALUE_FLAGS:
                if not eq:
                    if i + 1 >= len(args):
                        raise RunLineError(f"{word} needs a value")
                    value = args[i + 1]
                    i += 1
                values.setdefault(name, []).append(value)
            elif name in BOOL_FLAGS:
                if eq and value.lower() not in ("true", "false", "1", "0"):
                    raise RunLineError(f"{word}: a boolean flag takes true or false")
                flags[name] = not eq or value.lower() in ("true", "1")
            else:
                raise RunLineError(f"unknown flag {word.split('=', 1)[0]!r} for docker run")
        elif word.startswith("-") and len(word) > 1:
            group = word[1:]
            for j, letter in enumerate(group):
                if letter in _SHORT_BOOL:
                    flags[_SHORT_BOOL[letter]] = True
                    continue
                if letter in _SHORT_VALUE:
                    rest = group[j + 1:]
                    if rest.startswith("="):
                        rest = rest[1:]
                    if not rest:
                        if i + 1 >= len(args):
                            raise RunLineError(f"-{letter} needs a value")
                        rest = args[i + 1]
                        i += 1
                    values.setdefault(_SHORT_VALUE[letter], []).append(rest)
                    break
                raise RunLineError(f"unknown shorthand flag {letter!r} in {word!r} for docker run")
        else:
            image = word
            i += 1
            break
        i += 1
    if image is None:
        if i < len(args):
            image, i = args[i], i + 1
        else:
            raise RunLineError("the command line names no image (`docker run [OPTIONS] IMAGE [COMMAND]`)")
    return _record(text, image, tuple(args[i:]), values, flags)


def _record(text: str, image: str, command: tuple[str, ...], values: dict[str, list[str]], flags: dict[str, bool]) -> RunLine:
    shm = values.get("shm-size", [])
    env = []
    for item in values.get("env", []):
        name, _, value = item.partition("=")
        env.append((name, value))
    network = _last(values, "network") or _last(values, "net")
    return RunLine(
        text=text,
        image=image,
        command=command,
        gpus=tuple(parse_gpus(v) for v in values.get("gpus", [])),
        devices=tuple(values.get("device", [])),
        runtime=_last(values, "runtime"),
        env=tuple(env),
        ipc=_last(values, "ipc"),
        shm_size_bytes=parse_size(shm[-1]) if shm else None,
        ports=tuple(parse_port(v) for v in values.get("publish", [])),
        publish_all=flags.get("publish-all", False),
        volumes=tuple(values.get("volume", [])),
        mounts=tuple(values.get("mount", [])),
        volumes_from=tuple(values.get("volumes-from", [])),
        tmpfs=tuple(values.get("tmpfs", [])),
        user=_last(values, "user"),
        network=network,
        remove=flags.get("rm", False),
        ulimits=tuple(values.get("ulimit", [])),
        privileged=flags.get("privileged", False),
    )


def _last(values: dict[str, list[str]], name: str) -> Optional[str]:
    """A flag given twice takes its last value, as in Docker."""
    given = values.get(name)
    return given[-1] if given else None
