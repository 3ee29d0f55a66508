"""Docker: is the Docker Engine usable, and can it give containers GPUs (NVIDIA runtime, hook, CDI)?
Pure: judges what the Docker probe recorded."""

from __future__ import annotations

from typing import Optional

from ..model.facts import DockerFacts
from ..model.findings import FAIL, OK, Finding
from ..model.target import Target
from .context import CheckContext

NO_GPU_DRIVER = 'could not select device driver "" with capabilities: [[gpu]]'

DOCKER_SOURCE = "Docker Engine API on this host"


def _docker_fix(state: str) -> str:
    if state == "permission-denied":
        return (
            "Add yourself to the docker group (`sudo usermod -aG docker $USER`, then log in again) or "
            "use rootless Docker (`dockerd-rootless-setuptool.sh install`, DOCKER_HOST=unix://$XDG_RUNTIME_DIR/docker.sock)."
        )
    return (
        "Start the daemon (`sudo systemctl start docker`) or point DOCKER_HOST at a running one; "
        "`docker info` should answer."
    )


def _smoke_error(target: Optional[Target]) -> Optional[str]:
    image = target.image_facts if target else None
    return image.smoke.error if image and image.smoke and image.smoke.error else None


def check_docker(ctx: CheckContext) -> list[Finding]:
    facts, target = ctx.facts, ctx.target
    docker = facts.docker
    if docker is None:
        return []
    endpoint = docker.host or "the default socket"
    if docker.state == "permission-denied":
        return [
            Finding(
                code="docker-permission-denied",
                severity=FAIL,
                title=f"Docker socket {endpoint}: permission denied",
                detail=f"The daemon's socket exists but this user may not use it: {docker.error or 'permission denied'}. "
                    "`docker` commands fail with \"permission denied while trying to connect to the Docker daemon socket\".",
                hint=_docker_fix(docker.state),
                source=DOCKER_SOURCE,
            )
        ]
    if docker.state == "unexpected-answer":
        return [
            Finding(
                code="docker-unexpected-answer",
                severity=FAIL,
                title=f"Docker answered something unexpected at {endpoint}",
                detail=f"{docker.error or 'The answer is not what the Docker Engine API defines'}. Something other "
                    "than the Docker Engine may be listening there (a proxy, another service), or the daemon is broken.",
                hint="Check what DOCKER_HOST points at and that `docker version` and `docker info` answer normally; "
                    "restart the daemon (`sudo systemctl restart docker`).",
                source=DOCKER_SOURCE,
            )
        ]
    if docker.state != "ok":
        waited = f" within {docker.timeout_s:g} s" if docker.state == "timeout" and docker.timeout_s else ""
        return [
            Finding(
                code="docker-unreachable",
                severity=FAIL,
                title=f"Docker daemon at {endpoint} did not answer{waited}",
                detail=docker.error or f"state: {docker.state}",
                hint=_docker_fix(docker.state),
                source=DOCKER_SOURCE,
            )
        ]
    runtimes = ", ".join(docker.runtimes) or "none"
    findings = [
        Finding(
            code="docker-ok",
            severity=OK,
            title=f"Docker {docker.server_version or '(version unknown)'} answers at {endpoint}",
            detail=f"Runtimes: {runtimes}; default runtime: {docker.default_runtime or 'unknown'}.",
            source=DOCKER_SOURCE,
        )
    ]
    findings.append(_gpu_runtime(docker, _smoke_error(target)))
    return findings


def _gpu_runtime(docker: DockerFacts, smoke_error: Optional[str]) -> Finding:
    hook = any(path.endswith("/nvidia-container-runtime-hook") for path in docker.toolkit_binaries)
    registered = "nvidia" in docker.runtimes
    cdi = bool(docker.cdi_nvidia_specs)
    refused = smoke_error is not None and "could not select device driver" in smoke_error
    fix = (
        "Install the NVIDIA Container Toolkit (package nvidia-container-toolkit), then "
        "`sudo nvidia-ctk runtime configure --runtime=docker` and `sudo systemctl restart docker`."
    )
    if refused or not (hook or registered or cdi):
        seen = [
            f"runtimes: {', '.join(docker.runtimes) or 'none'}",
            "no nvidia-container-runtime-hook on this host" if docker.daemon_local else "the daemon is remote",
            f"CDI specs for nvidia.com/gpu: {', '.join(docker.cdi_nvidia_specs) or 'none'}",
        ]
        said = f"Docker answered: {smoke_error}. " if refused else ""
        return Finding(
            code="nvidia-runtime-missing",
            severity=FAIL,
            title="Docker cannot give containers GPUs: no NVIDIA runtime",
            detail=f"{said}`docker run --gpus all` fails with `{NO_GPU_DRIVER}` "
                f"({'; '.join(seen)}).",
            hint=fix,
            source=DOCKER_SOURCE,
        )
    how = []
    if registered:
        how.append("runtime `nvidia` registered" + (" (default)" if docker.default_runtime == "nvidia" else ""))
    if hook:
        how.append("nvidia-container-runtime-hook installed (`--gpus`)")
    if cdi:
        how.append(f"CDI spec {', '.join(docker.cdi_nvidia_specs)}")
    mode = f"; toolkit mode {docker.toolkit_mode}" if docker.toolkit_mode else ""
    return Finding(
        code="nvidia-runtime-ok",
        severity=OK,
        title="Docker can give containers GPUs",
        detail="; ".join(how) + mode + ".",
        source=DOCKER_SOURCE,
    )
