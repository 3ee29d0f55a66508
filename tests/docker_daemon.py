"""A real Docker daemon for the tests: reuse one that answers, else start a private one.

The private daemon runs ``dockerd --storage-driver=vfs --iptables=false --bridge=none`` with its
own data root, exec root, pid file and unix socket under a temporary directory, so it never
touches a system daemon. Test images are built ``FROM scratch`` with the legacy builder and
carry only ENV and LABEL lines: the exact environment of real CUDA / PyTorch images.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from typing import Iterator, Mapping, Optional, Sequence

# Set this to a daemon's address to use it instead of starting one.
REUSE_ENV = "CUDADOCTOR_TEST_DOCKER_HOST"
START_TIMEOUT_S = 60.0
TOOLKIT_HOOK = "nvidia-container-runtime-hook"


def answers(host: str, timeout: float = 3.0) -> bool:
    try:
        import docker

        client = docker.DockerClient(base_url=host, timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


class PrivateDaemon:
    """dockerd started by the test session; ``stop()`` ends exactly that process."""

    def __init__(self, extra_args: Sequence[str] = ()) -> None:
        self.extra_args = tuple(extra_args)  # more dockerd options (e.g. --add-runtime)
        self.root = tempfile.mkdtemp(prefix="cdd-", dir="/tmp")  # short: unix socket paths are limited
        self.socket = os.path.join(self.root, "docker.sock")
        self.host = f"unix://{self.socket}"
        self.log_path = os.path.join(self.root, "dockerd.log")
        self.process: Optional[subprocess.Popen] = None

    def start(self) -> Optional[str]:
        """Start dockerd; return None on success, else why it could not be started."""
        dockerd = shutil.which("dockerd") or shutil.which("dockerd", path="/usr/sbin:/usr/bin:/usr/local/bin")
        if dockerd is None:
            return "dockerd is not installed (apt-get install docker.io)"
        if os.geteuid() != 0:
            return "dockerd needs root here"
        command = [
            dockerd,
            "--storage-driver=vfs",
            "--iptables=false",
            "--bridge=none",
            f"--data-root={self.root}/data",
            f"--exec-root={self.root}/exec",
            f"--pidfile={self.root}/dockerd.pid",
            f"--host={self.host}",
            *self.extra_args,
        ]
        log = open(self.log_path, "wb")
        env = {**os.environ, "PATH": self._path_without_toolkit()}
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return f"dockerd exited with status {self.process.returncode}: {self._log_tail()}"
            if os.path.exists(self.socket) and answers(self.host):
                return None
            time.sleep(0.2)
        self.stop()
        return f"dockerd did not answer within {START_TIMEOUT_S:g} s: {self._log_tail()}"

    def _path_without_toolkit(self) -> str:
        """dockerd's PATH with the NVIDIA Container Toolkit hidden: dockerd gives `--gpus` a device
        driver whenever nvidia-container-runtime-hook is on its PATH, so on a machine with the
        toolkit a private daemon would run GPU containers and the tests would follow the machine.
        A directory holding the hook is replaced by a shadow of links to everything else in it."""
        dirs = os.environ.get("PATH", "").split(os.pathsep) + ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        kept: list[str] = []
        for number, directory in enumerate(dict.fromkeys(d for d in dirs if d)):
            if not os.path.exists(os.path.join(directory, TOOLKIT_HOOK)):
                kept.append(directory)
                continue
            shadow = os.path.join(self.root, f"path-{number}")
            os.makedirs(shadow, exist_ok=True)
            for name in os.listdir(directory):
                if not name.startswith("nvidia-"):
                    os.symlink(os.path.join(directory, name), os.path.join(shadow, name))
            kept.append(shadow)
        return os.pathsep.join(kept)

    def _log_tail(self) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as handle:
                return " | ".join(handle.read().strip().splitlines()[-3:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        shutil.rmtree(self.root, ignore_errors=True)


def started(extra_args: Sequence[str] = ()) -> Iterator[str]:
    """A private daemon for a fixture: its host while the fixture lives, stopped afterwards; the
    test is skipped (with why) when no daemon can be started here."""
    import pytest

    daemon = PrivateDaemon(extra_args)
    why = daemon.start()
    if why is not None:
        daemon.stop()
        pytest.skip(f"no Docker daemon can be started here: {why}")
    try:
        yield daemon.host
    finally:
        daemon.stop()


def nvidia_runtime_args() -> list[str]:
    """dockerd options that register a runtime named ``nvidia``, as `nvidia-ctk runtime configure`
    does, pointing at runc (no NVIDIA Container Toolkit here): the daemon then lists the runtime
    a host with the toolkit lists. Containers are not started with it."""
    runc = shutil.which("runc") or shutil.which("runc", path="/usr/sbin:/usr/bin:/usr/local/bin") or "/usr/bin/runc"
    return [f"--add-runtime=nvidia={runc}"]


def dockerfile(env: Mapping[str, str], labels: Mapping[str, str]) -> str:
    """A FROM scratch Dockerfile with only ENV and LABEL lines (JSON strings quote any value)."""
    lines = ["FROM scratch"]
    lines += [f"ENV {key}={json.dumps(value)}" for key, value in env.items()]
    lines += [f"LABEL {json.dumps(key)}={json.dumps(value)}" for key, value in labels.items()]
    return "\n".join(lines) + "\n"


def build_context(dockerfile_text: str, files: Mapping[str, bytes] = {}) -> io.BytesIO:
    """A build context: a tar holding the Dockerfile and the files it COPYs (context paths -> bytes)."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, data in {"Dockerfile": dockerfile_text.encode(), **files}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive.seek(0)
    return archive


def build_image(host: str, tag: str, env: Mapping[str, str], labels: Mapping[str, str] = {}, platform: Optional[str] = None) -> None:
    """Build through the Engine's legacy builder (the /build endpoint without BuildKit)."""
    import docker

    archive = build_context(dockerfile(env, labels))
    client = docker.DockerClient(base_url=host, timeout=120)
    try:
        kwargs = {"platform": platform} if platform else {}
        client.images.build(fileobj=archive, custom_context=True, tag=tag, rm=True, **kwargs)
    finally:
        client.close()


def load_image(host: str, tag: str, os_name: str, architecture: str, env: Mapping[str, str]) -> None:
    """An image for another platform: the legacy builder ignores --platform for FROM scratch, so
    the image is loaded from a `docker save` archive holding just a config and no layers."""
    import docker

    config = {
        "architecture": architecture,
        "os": os_name,
        "config": {"Env": [f"{k}={v}" for k, v in env.items()]},
        "rootfs": {"type": "layers", "diff_ids": []},
    }
    manifest = [{"Config": "config.json", "RepoTags": [tag], "Layers": []}]
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, content in (("config.json", config), ("manifest.json", manifest)):
            data = json.dumps(content).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    client = docker.DockerClient(base_url=host, timeout=120)
    try:
        client.images.load(archive.getvalue())
    finally:
        client.close()


def build_image_from(host: str, tag: str, dockerfile_text: str, files: Mapping[str, bytes] = {}) -> None:
    """Build a FROM scratch image from a Dockerfile and the files it COPYs (context paths -> bytes)."""
    import docker

    archive = build_context(dockerfile_text, files)
    client = docker.DockerClient(base_url=host, timeout=120)
    try:
        client.images.build(fileobj=archive, custom_context=True, tag=tag, rm=True)
    finally:
        client.close()


def load_image_with_files(host: str, tag: str, files: Mapping[str, bytes], cmd: Sequence[str] = ("/bin/true",)) -> None:
    """A FROM scratch image of one layer holding ``files`` (image paths -> bytes), loaded from a
    `docker save` archive: quicker than building when there are thousands of files (the builder
    copies them once per step)."""
    import hashlib

    import docker

    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w") as tar:
        made: set[str] = set()
        for path, data in files.items():
            parts = path.strip("/").split("/")
            for depth in range(1, len(parts)):
                directory = "/".join(parts[:depth])
                if directory not in made:
                    made.add(directory)
                    info = tarfile.TarInfo(directory)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
            info = tarfile.TarInfo("/".join(parts))
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    layer_bytes = layer.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer_bytes).hexdigest()
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Cmd": list(cmd)},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    }
    manifest = [{"Config": "config.json", "RepoTags": [tag], "Layers": ["layer.tar"]}]
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name, data in (("config.json", json.dumps(config).encode()), ("manifest.json", json.dumps(manifest).encode()),
                           ("layer.tar", layer_bytes)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    client = docker.DockerClient(base_url=host, timeout=300)
    try:
        client.images.load(archive.getvalue())
    finally:
        client.close()
