"""The `docker run` line (check --run) against this host and its image: does it pass GPUs at all,
which ones, is /dev/shm big enough for DataLoader workers, are Jupyter or SSH published on every
interface, does anything outlive the container."""

from __future__ import annotations

from typing import Optional

from ..model.facts import GpuFacts
from ..model.findings import FAIL, INFO, WARN, Finding
from ..model.runline import RunLine
from .context import CheckContext

DOCKER_RUN_SOURCE = "Docker CLI reference: docker container run (--gpus, --device, --runtime, --ipc, --shm-size, --publish, --volume, --mount)"
TOOLKIT_SOURCE = "NVIDIA Container Toolkit: GPU enumeration (--gpus, NVIDIA_VISIBLE_DEVICES, CDI nvidia.com/gpu)"
SHM_MIN = 1024**3
DOCKER_SHM_DEFAULT = 64 * 1024**2
# Container ports whose publication on every interface hands out a shell or a notebook.
SENSITIVE_PORTS = {8888: "Jupyter", 22: "SSH"}


def _requested_ids(run: RunLine, image_env: Optional[str]) -> tuple[list[str], Optional[int], bool]:
    """(device IDs named, a count asked for, whether "all" was asked) over --gpus, CDI names and,
    under --runtime nvidia, NVIDIA_VISIBLE_DEVICES (the line's -e first, else the image's)."""
    ids: list[str] = []
    count: Optional[int] = None
    everything = False
    for request in run.gpus:
        ids += request.device_ids
        if request.count == -1:
            everything = True
        elif request.count is not None:
            count = max(count or 0, request.count)
    for name in run.cdi_gpus:
        if name == "all":
            everything = True
        else:
            ids.append(name)
    if run.runtime == "nvidia" and not run.gpus:
        visible = run.env_value("NVIDIA_VISIBLE_DEVICES") or image_env
        if visible == "all":
            everything = True
        elif visible and visible not in ("none", "void"):
            ids += [v.strip() for v in visible.split(",") if v.strip()]
    return ids, count, everything


def _passes_gpus(run: RunLine, image_env: Optional[str]) -> bool:
    if run.gpus or run.cdi_gpus:
        return True
    if run.runtime == "nvidia":
        visible = run.env_value("NVIDIA_VISIBLE_DEVICES") or image_env
        return visible is None or visible not in ("", "none", "void")  # None: the image's env is not known
    return False


def _unknown_ids(ids: list[str], gpus: tuple[GpuFacts, ...]) -> list[str]:
    uuids = {g.uuid for g in gpus if getattr(g, "uuid", None)}
    missing = []
    for device in ids:
        if device.isdigit():
            if int(device) >= len(gpus):
                missing.append(device)
        elif device.upper().startswith("GPU-"):
            if uuids and device not in uuids:
                missing.append(device)
        # MIG-... and index:index forms name MIG devices; judged by the toolkit, not here
    return missing


def _shm_mounted(run: RunLine) -> bool:
    for volume in run.volumes:
        parts = volume.split(":")
        if len(parts) >= 2 and parts[1] == "/dev/shm":
            return True
    for mount in run.mounts:
        fields = dict(f.partition("=")[::2] for f in mount.split(","))
        if any(fields.get(k) == "/dev/shm" for k in ("target", "dst", "destination")):
            return True
    return any(t.split(":", 1)[0] == "/dev/shm" for t in run.tmpfs)


def _size(n: int) -> str:
    return f"{n / 1024**3:g} GiB" if n >= 1024**3 else f"{n / 1024**2:g} MiB"


def check_run(ctx: CheckContext) -> list[Finding]:
    target = ctx.target
    run = target.run if target else None
    if run is None:
        return []
    image = target.image_facts if target else None
    image_env = image.env_value("NVIDIA_VISIBLE_DEVICES") if image is not None else None
    gpus = ctx.facts.gpus  # inside the container the host's GPUs count, not this shell's CUDA_VISIBLE_DEVICES
    known = bool(gpus) and (ctx.host.nvml_ok or ctx.host.planned)
    indices = ",".join(str(g.index) for g in gpus) or "0"
    findings: list[Finding] = []

    if not _passes_gpus(run, image_env):
        raw = [d for d in run.devices if d.startswith("/dev/nvidia")]
        extra = (
            f" {', '.join(raw)} passes device nodes only: without the NVIDIA runtime the driver's libraries are not "
            "mounted, so CUDA still finds no driver."
            if raw
            else ""
        )
        findings.append(
            Finding(
                code="run-no-gpus",
                severity=FAIL,
                title="The run line passes no GPU to the container",
                detail="No --gpus, no --device nvidia.com/gpu=..., no --runtime nvidia: the container sees no GPU and "
                    f"torch.cuda.is_available() is False inside it.{extra}",
                hint=f"Add `--gpus all`, or pin them: `--gpus '\"device={indices}\"'` (with CDI: `--device nvidia.com/gpu=all`).",
                source=TOOLKIT_SOURCE,
            )
        )
    else:
        ids, count, everything = _requested_ids(run, image_env)
        missing = _unknown_ids(ids, gpus) if known else []
        if known and count is not None and count > len(gpus):
            missing.append(f"a count of {count}")
        if missing:
            findings.append(
                Finding(
                    code="run-gpu-request-unsatisfiable",
                    severity=FAIL,
                    title=f"The run line asks for GPUs this host does not have: {', '.join(missing)}",
                    detail=f"This host has {len(gpus)} GPU(s): indices {indices}"
                        + (f", UUIDs {', '.join(g.uuid for g in gpus if g.uuid)}" if any(g.uuid for g in gpus) else "")
                        + ". The container fails to start (nvidia-container-cli: device error: unknown device).",
                    hint=f"Name GPUs this host has: `--gpus '\"device={indices}\"'`.",
                    source=TOOLKIT_SOURCE,
                )
            )
        if everything and len(gpus) > 1:
            findings.append(
                Finding(
                    code="run-gpus-unpinned",
                    severity=INFO,
                    title=f"The run line takes all {len(gpus)} GPUs of this host",
                    detail="On a shared server every container started this way competes for every GPU.",
                    hint=f"Pin the GPUs the job should use: `--gpus '\"device={indices}\"'` (the inner quotes keep the "
                        "comma inside one value).",
                    source=DOCKER_RUN_SOURCE,
                )
            )

    shares_other = (run.ipc or "").startswith("container:")  # another container's /dev/shm: its size is not on this line
    if run.ipc != "host" and not shares_other and not _shm_mounted(run):
        size = run.shm_size_bytes if run.shm_size_bytes is not None else DOCKER_SHM_DEFAULT
        if run.ipc == "none" or size < SHM_MIN:
            have = "no /dev/shm (--ipc=none)" if run.ipc == "none" else (
                f"--shm-size {_size(size)}" if run.shm_size_bytes is not None else "Docker's default 64 MiB /dev/shm"
            )
            findings.append(
                Finding(
                    code="run-shm-too-small",
                    severity=WARN,
                    title=f"The container gets {have}: too small for PyTorch DataLoader workers",
                    detail="DataLoader workers (num_workers > 0) hand batches to the main process through shared memory "
                        "in /dev/shm; when it fills they die with \"ERROR: Unexpected bus error encountered in worker. "
                        "This might be caused by insufficient shared memory (shm).\"",
                    hint="Add `--ipc=host`, or `--shm-size=8g` (at least 1g).",
                    source=DOCKER_RUN_SOURCE,
                )
            )

    exposed = set(image.hygiene.exposed_ports) if image is not None and image.hygiene is not None else set()
    for port in run.ports:
        for number in port.container_ports:
            what = SENSITIVE_PORTS.get(number)
            if what is None or not port.public:
                continue
            host_port = port.host_port or str(number)
            findings.append(
                Finding(
                    code="run-port-public",
                    severity=WARN,
                    title=f"{what} (port {number}) is published on every interface: -p {port.text}",
                    detail=f"Anyone who can reach this host can reach the container's {what}"
                        + (" (a notebook runs code)." if number == 8888 else " (password guessing, if it takes passwords)."),
                    hint=f"Publish it on loopback and tunnel to it: `-p 127.0.0.1:{host_port}:{number}`"
                        + (" (then `ssh -L 8888:127.0.0.1:8888 host`)." if number == 8888 else "."),
                    source=DOCKER_RUN_SOURCE,
                )
            )
    if run.publish_all:
        for spec in sorted(exposed):
            number = int(spec.split("/", 1)[0]) if spec.split("/", 1)[0].isdigit() else 0
            what = SENSITIVE_PORTS.get(number)
            if what is not None:
                findings.append(
                    Finding(
                        code="run-port-public",
                        severity=WARN,
                        title=f"{what} (port {number}) is published on every interface: -P publishes the image's EXPOSE {spec}",
                        detail=f"-P maps every exposed port to a random host port on all interfaces, {what} included.",
                        hint=f"Drop -P and publish on loopback: `-p 127.0.0.1:{number}:{number}`.",
                        source=DOCKER_RUN_SOURCE,
                    )
                )

    if not (run.volumes or run.mounts or run.volumes_from):
        findings.append(
            Finding(
                code="run-no-volume",
                severity=INFO,
                title="The run line mounts no volume: what the job writes stays in the container",
                detail="Checkpoints, logs and notebooks written inside the container are lost with it"
                    + (" (--rm removes it when it exits)." if run.remove else "."),
                hint="Mount a directory for outputs: `-v \"$PWD/checkpoints:/workspace/checkpoints\"` (or `--mount "
                    "type=volume,src=ckpt,dst=/workspace/checkpoints`).",
                source=DOCKER_RUN_SOURCE,
            )
        )
    return findings
