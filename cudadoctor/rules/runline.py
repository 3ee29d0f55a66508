"""The `docker run` line (check --run) against this host and its image: does it pass GPUs at all,
which ones, is /dev/shm big enough for DataLoader workers, are Jupyter or SSH published on every
interface, does anything outlive the container."""

from __future__ import annotations

import shlex
from typing import Optional, Sequence

from ..model.facts import GpuFacts
from ..model.findings import FAIL, INFO, WARN, Finding
from ..model.numbers import is_ascii_integer
from ..model.runline import RunLine
from ..model.target import Target
from .context import CheckContext

DOCKER_RUN_SOURCE = "Docker CLI reference: docker container run (--gpus, --device, --runtime, --ipc, --shm-size, --publish, --volume, --mount)"
TOOLKIT_SOURCE = "NVIDIA Container Toolkit: GPU enumeration (--gpus, NVIDIA_VISIBLE_DEVICES, CDI nvidia.com/gpu)"
SHM_MIN = 1024**3
DOCKER_SHM_DEFAULT = 64 * 1024**2
# Container ports whose publication on every interface hands out a shell or a notebook.
SENSITIVE_PORTS = {8888: "Jupyter", 22: "SSH"}

# What a small /dev/shm breaks depends on what the container runs, so the advice follows the kind.
PYTORCH = "pytorch"  # DataLoader workers hand batches over through /dev/shm: a bus error at 64 MiB (a warning)
SPLIT_MODEL_SERVER = "split-model-server"  # NCCL between the GPUs of a model split across them (a note)
TRITON = "triton"  # the Python backend's stubs exchange tensors through /dev/shm (a note)
NO_SHM = "unaffected"  # nothing goes through /dev/shm: no advice
UNKNOWN = "unknown"  # nothing says what it runs: a note, in case it is PyTorch
# Servers known by their repository's last path component (on any registry or mirror).
SERVER_IMAGES = {
    # vLLM's docs: it "uses PyTorch, which uses shared memory to share data between processes under
    # the hood, particularly for tensor parallel inference" (run with --ipc=host or --shm-size).
    "vllm-openai": SPLIT_MODEL_SERVER,
    "vllm": SPLIT_MODEL_SERVER,  # NGC's vLLM (nvcr.io/nvidia/vllm): the same server on NGC PyTorch
    # TGI's README, "A note on Shared Memory (shm)": NCCL between its shards may go through host
    # memory, hence its --shm-size 1g.
    "text-generation-inference": SPLIT_MODEL_SERVER,
    # Triton's Python backend connects each model's stub process to the server through shared memory;
    # the other backends run inside the server's process.
    "tritonserver": TRITON,
    # Ollama runs the model (llama.cpp) inside its own process, across GPUs too: no /dev/shm.
    "ollama": NO_SHM,
}


def _passes_gpus(run: RunLine, image_env: Optional[str]) -> bool:
    if run.gpus or run.cdi_gpus:
        return True
    if run.runtime == "nvidia":
        visible = run.env_value("NVIDIA_VISIBLE_DEVICES") or image_env
        return visible is None or visible not in ("", "none", "void")  # None: the image's env is not known
    return False


def _unknown_ids(ids: Sequence[str], gpus: tuple[GpuFacts, ...]) -> list[str]:
    uuids = {g.uuid for g in gpus if getattr(g, "uuid", None)}
    missing = []
    for device in ids:
        if device.isdigit():  # an index; one in other digits (²) or of thousands of digits names no GPU either
            if not is_ascii_integer(device, 9) or int(device) >= len(gpus):
                missing.append(device)
        elif device.upper().startswith("GPU-"):
            if uuids and device not in uuids:
                missing.append(device)
        # MIG-... and index:index forms name MIG devices; judged by the toolkit, not here
    return missing


def _size(n: int) -> str:
    return f"{n / 1024**3:g} GiB" if n >= 1024**3 else f"{n / 1024**2:g} MiB"


def workload_kind(target: Target) -> str:
    """What the container runs, as far as a small /dev/shm is concerned: a known server by its
    repository name first (NGC's vLLM also holds PyTorch), then PyTorch by what the image holds
    (a table family, an NGC PyTorch month, PYTORCH_VERSION, pytorch/pytorch), else unknown."""
    from ..model.imageref import ImageRefError, parse_image_ref

    path = ""
    if target.image:
        try:
            path = parse_image_ref(target.image).path
        except ImageRefError:
            path = ""
    kind = SERVER_IMAGES.get(path.rsplit("/", 1)[-1])
    if kind is not None:
        return kind
    image = target.image_facts
    if target.torch or target.family or path == "pytorch/pytorch" or (image is not None and image.env_value("PYTORCH_VERSION")):
        return PYTORCH
    return UNKNOWN


def _gpus_passed(run: RunLine, image_env: Optional[str], gpus: tuple[GpuFacts, ...]) -> Optional[int]:
    """How many GPUs the container gets, where the line and the host say (None: not known)."""
    ids, count, everything = run.gpus_requested(image_env)
    if everything:
        return len(gpus) or None
    if ids:
        return len(ids)
    return count


def _gpu_change(run: RunLine, what: str, new: str) -> str:
    """In the run line, replace its own GPU options (as it writes them) with ``new``; where the GPUs
    come from the image's NVIDIA_VISIBLE_DEVICES alone, add ``new``."""
    said = [f"`--gpus {shlex.quote(r.text)}`" for r in run.gpus]
    said += [f"`--device nvidia.com/gpu={name}`" for name in run.cdi_gpus]
    visible = run.env_value("NVIDIA_VISIBLE_DEVICES")
    if not said and visible is not None:
        said.append(f"`-e NVIDIA_VISIBLE_DEVICES={visible}`")
    if not said:
        return f"In the run line, add {what}: {new}"
    return f"In the run line, replace {' and '.join(said)} with {what}: {new}"


def _shm_fix(run: RunLine, size: str) -> str:
    """How to give the container more /dev/shm, replacing what the line has rather than repeating it."""
    if run.ipc == "none":
        return f"replace `--ipc=none` with `--ipc=host` (or drop it and add `--shm-size={size}`)"
    if run.shm_size_bytes is not None:
        return f"raise `--shm-size` from {_size(run.shm_size_bytes)} to `--shm-size={size}`, or use `--ipc=host` instead"
    return f"add `--ipc=host` (or `--shm-size={size}`) to the `docker run` line"


def _shm_finding(run: RunLine, size: int, kind: str, passed: Optional[int]) -> Optional[Finding]:
    if kind == NO_SHM or (kind == SPLIT_MODEL_SERVER and passed is not None and passed <= 1):
        return None  # nothing of it goes through /dev/shm (a server on one GPU splits no model)
    if run.ipc == "none":
        have = "no /dev/shm (--ipc=none)"
    elif run.shm_size_bytes is not None:
        have = f"--shm-size {_size(size)} of /dev/shm"
    else:
        have = "Docker's default 64 MiB /dev/shm"
    bus_error = ("\"ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
                 "memory (shm).\"")
    if kind == PYTORCH:
        return Finding(
            code="run-shm-too-small",
            severity=WARN,
            title=f"The container gets {have}: too small for PyTorch DataLoader workers",
            detail="DataLoader workers (num_workers > 0) hand batches to the main process through shared memory "
                f"in /dev/shm; when it fills they die with {bus_error}",
            hint=f"Give the container more shared memory: {_shm_fix(run, '8g')} (at least 1g).",
            source=DOCKER_RUN_SOURCE,
        )
    if kind == SPLIT_MODEL_SERVER:
        return Finding(
            code="run-shm-too-small",
            severity=INFO,
            title=f"The container gets {have}: too small for a model split across GPUs",
            detail="A model too large for one GPU is split across several (tensor parallelism); NCCL then passes data "
                "between the GPUs' processes through /dev/shm when they have no direct path (NVLink or PCIe peer to "
                "peer), and stops with an NCCL error when it fills. This server's docs start it with --ipc=host or "
                "--shm-size 1g. A model that fits on one GPU does not need it.",
            hint=f"To split a model across GPUs, {_shm_fix(run, '1g')}.",
            source=DOCKER_RUN_SOURCE,
        )
    if kind == TRITON:
        return Finding(
            code="run-shm-too-small",
            severity=INFO,
            title=f"The container gets {have}: small for Python backend models with large tensors",
            detail="Triton's Python backend passes each request's inputs and outputs between the server and the "
                "model's own process through /dev/shm: 64 MiB holds small tensors, not large batches or many "
                "instances. Models on the other backends (TensorRT, ONNX Runtime, PyTorch) do not use it.",
            hint=f"If it serves Python backend models, {_shm_fix(run, '1g')}.",
            source=DOCKER_RUN_SOURCE,
        )
    return Finding(
        code="run-shm-too-small",
        severity=INFO,
        title=f"The container gets {have}: too small if it runs PyTorch DataLoader workers",
        detail=f"Nothing known of {run.image} says it holds PyTorch. If it does, DataLoader workers (num_workers > 0) "
            f"hand batches over through /dev/shm and die when it fills, with {bus_error}",
        hint=f"If it trains with PyTorch, {_shm_fix(run, '8g')}.",
        source=DOCKER_RUN_SOURCE,
    )


def check_run(ctx: CheckContext) -> list[Finding]:
    target = ctx.target
    run = target.run if target else None
    if target is None or run is None:
        return []
    image = target.image_facts
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
                hint=f"Pass the GPUs to the container: add `--gpus all` to the run line (`docker run --gpus all ... "
                    f"{run.image}`), or pin them with `--gpus '\"device={indices}\"'` (with CDI: `--device nvidia.com/gpu=all`).",
                source=TOOLKIT_SOURCE,
            )
        )
    else:
        ids, count, everything = run.gpus_requested(image_env)
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
                    hint=_gpu_change(run, "GPUs this host has", f"`--gpus '\"device={indices}\"'`."),
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
                    hint=_gpu_change(run, "the GPUs the job should use",
                                     f"`--gpus '\"device={indices}\"'` (the inner quotes keep the comma inside one value)."),
                    source=DOCKER_RUN_SOURCE,
                )
            )

    shares_other = (run.ipc or "").startswith("container:")  # another container's /dev/shm: its size is not on this line
    if run.ipc != "host" and not shares_other and not run.dev_shm_mounted:
        size = run.shm_size_bytes if run.shm_size_bytes is not None else DOCKER_SHM_DEFAULT
        if run.ipc == "none" or size < SHM_MIN:
            shm = _shm_finding(run, size, workload_kind(target), _gpus_passed(run, image_env, gpus))
            if shm is not None:
                findings.append(shm)

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
                    hint=f"Publish it on loopback only: in the run line, replace `-p {port.text}` with "
                        f"`-p 127.0.0.1:{host_port}:{number}`"
                        + (", then tunnel to it: `ssh -L 8888:127.0.0.1:8888 host`." if number == 8888 else "."),
                    source=DOCKER_RUN_SOURCE,
                )
            )
    if run.publish_all:
        for spec in sorted(exposed):
            number = int(spec.split("/", 1)[0]) if is_ascii_integer(spec.split("/", 1)[0], 5) else 0
            what = SENSITIVE_PORTS.get(number)
            if what is not None:
                findings.append(
                    Finding(
                        code="run-port-public",
                        severity=WARN,
                        title=f"{what} (port {number}) is published on every interface: -P publishes the image's EXPOSE {spec}",
                        detail=f"-P maps every exposed port to a random host port on all interfaces, {what} included.",
                        hint=f"In the run line, replace -P with ports published on loopback only: `-p 127.0.0.1:{number}:{number}`.",
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
                hint="Mount a directory for outputs: add `-v \"$PWD/checkpoints:/workspace/checkpoints\"` to the run line "
                    "(or `--mount type=volume,src=ckpt,dst=/workspace/checkpoints`).",
                source=DOCKER_RUN_SOURCE,
            )
        )
    return findings
