"""The `docker run` line (check --run) of a multi-GPU job: does it pass the GPUs the job wants,
shared memory and an IPC namespace NCCL can work in, locked memory and the InfiniBand devices
for RDMA. Runs with the multi-GPU checks' condition (two or more GPUs, or --gpus-per-job)."""

from __future__ import annotations

from typing import Optional

from ..model.findings import FAIL, WARN, Finding
from ..model.runline import RunLine
from .context import CheckContext
from .multigpu import NCCL_TROUBLESHOOTING, SHM_PER_GPU, in_scope, interconnect, job_size
from .runline import DOCKER_RUN_SOURCE, DOCKER_SHM_DEFAULT

_RDMA_DEVICE = "/dev/infiniband"


def _requested_count(run: RunLine, image_env: Optional[str], host_gpus: int) -> Optional[int]:
    """How many GPUs the line passes: a number, all of the host's, or None when it cannot be told."""
    ids, count, everything = run.gpus_requested(image_env)
    if everything:
        return host_gpus
    if ids:
        return len(ids)
    return count


def _memlock_unlimited(run: RunLine) -> bool:
    for value in run.ulimits:
        name, _, limits = value.partition("=")
        if name.strip() == "memlock" and all(part.strip() == "-1" for part in limits.split(":")):
            return True
    return False


def check_run_multigpu(ctx: CheckContext) -> list[Finding]:
    target = ctx.target
    run = target.run if target else None
    if run is None or not in_scope(ctx):
        return []
    image = target.image_facts if target else None
    image_env = image.env_value("NVIDIA_VISIBLE_DEVICES") if image is not None else None
    gpus = len(ctx.facts.gpus)
    wanted = job_size(ctx)
    findings = []
    passed = _requested_count(run, image_env, gpus)
    if ctx.gpus_per_job is not None and passed is not None and 0 < passed < wanted:
        findings.append(
            Finding(
                code="multi-gpu-run-gpus-short",
                severity=FAIL,
                title=f"The run line passes {passed} GPU(s) to a job of {wanted}",
                detail=f"Inside the container CUDA sees {passed} GPU(s): torchrun --nproc-per-node {wanted} fails with "
                    "\"CUDA error: invalid device ordinal\" on the ranks past them.",
                hint="Pass the job's GPUs: `--gpus all`" + (f" or `--gpus {wanted}`" if wanted < gpus else "")
                    + f" (or `--gpus '\"device={','.join(str(i) for i in range(wanted))}\"'`).",
                source=DOCKER_RUN_SOURCE,
            )
        )
    if wanted < 2 or (passed is not None and passed < 2):
        return findings
    need = wanted * SHM_PER_GPU
    shares_other = (run.ipc or "").startswith("container:")
    if run.ipc != "host" and not shares_other and not run.dev_shm_mounted:
        size = run.shm_size_bytes if run.shm_size_bytes is not None else DOCKER_SHM_DEFAULT
        if run.ipc == "none" or size < need:
            have = "no /dev/shm (--ipc=none)" if run.ipc == "none" else (
                f"a {size / 1024**3:g} GiB /dev/shm" if run.shm_size_bytes is not None and size >= 1024**3
                else f"a {size / 1024**2:g} MiB /dev/shm"
            )
            findings.append(
                Finding(
                    code="multi-gpu-run-ipc",
                    severity=WARN,
                    title=f"A job of {wanted} GPUs in this container gets {have} and a private IPC namespace: "
                        f"add `--ipc=host` or `--shm-size={wanted}g`",
                    detail="NCCL's ranks exchange data through shared-memory segments in /dev/shm (\"NCCL WARN Error: failed "
                        "to extend /dev/shm/nccl-... to ... bytes\", \"Bus error\"), and every rank's DataLoader workers "
                        "hand batches over the same way; Docker gives a container 64 MiB of it.",
                    hint=f"Add to the run line: `--ipc=host --ulimit memlock=-1` (or `--shm-size={wanted}g --ulimit memlock=-1`).",
                    source=f"{NCCL_TROUBLESHOOTING}; {DOCKER_RUN_SOURCE}",
                )
            )
    facts = interconnect(ctx)
    if facts is None or not facts.infiniband:
        return findings
    if not _memlock_unlimited(run):
        findings.append(
            Finding(
                code="multi-gpu-run-memlock",
                severity=WARN,
                title="The run line keeps Docker's locked-memory limit on a host with InfiniBand/RoCE: add `--ulimit memlock=-1`",
                detail="RDMA pins its buffers; under the container's default RLIMIT_MEMLOCK NCCL's InfiniBand transport "
                    "fails to register memory and falls back to sockets, or fails.",
                hint="Add to the run line: `--ulimit memlock=-1`.",
                source=NCCL_TROUBLESHOOTING,
            )
        )
    if not run.privileged and not any(d.split(":", 1)[0].rstrip("/") == _RDMA_DEVICE for d in run.devices):
        names = ", ".join(d.name for d in facts.infiniband[:4])
        findings.append(
            Finding(
                code="multi-gpu-run-no-infiniband",
                severity=WARN,
                title=f"The run line does not pass the InfiniBand devices ({names}): add `--device /dev/infiniband`",
                detail="Without /dev/infiniband in the container NCCL finds no RDMA device and sends everything between "
                    "hosts over TCP sockets (NCCL_DEBUG=INFO: \"NET/Socket\").",
                hint="Add to the run line: `--device /dev/infiniband --ulimit memlock=-1` (and `--cap-add IPC_LOCK` where the image needs it).",
                source=NCCL_TROUBLESHOOTING,
            )
        )
    return findings
