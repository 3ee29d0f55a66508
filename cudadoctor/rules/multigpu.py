"""Multi-GPU readiness: will a DDP/FSDP job's NCCL work on this host, and over which path.

Runs when CUDA here sees two or more GPUs, or ``check --gpus-per-job N`` asks for jobs of N GPUs
(the fabric check runs for any GPU count: an unready NVSwitch fabric stops CUDA on one GPU too).
The job's GPUs are the GPUs in scope (CUDA_VISIBLE_DEVICES applied). Unknown facts (a what-if
GPU, an older snapshot, a driver without the call) give no verdict.
"""

from __future__ import annotations

from ..host.view import out_of_reach
from ..model.facts import GpuFacts
from ..model.findings import FAIL, INFO, OK, WARN, Finding
from ..model.topology import (
    FABRIC_COMPLETED,
    FABRIC_IN_PROGRESS,
    FABRIC_NOT_STARTED,
    LINK_SYSTEM,
    TIER_HOST,
    TIER_NVLINK,
    InterconnectFacts,
    index_ranges,
    islands,
    pair_matrix,
    said_together,
)
from ..model.versions import CudaVersion
from .context import CheckContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

NVML_SOURCE = "NVML API reference: nvmlDeviceGetTopologyCommonAncestor, nvmlDeviceGetP2PStatus, nvmlDeviceGetNvLinkState"
FABRIC_SOURCE = (
    "NVIDIA Fabric Manager User Guide (NVSwitch systems: CUDA initialisation fails with cudaErrorSystemNotReady until "
    "Fabric Manager has configured the fabric; its version must match the driver's); NVML nvmlDeviceGetGpuFabricInfoV"
)
NCCL_TROUBLESHOOTING = "NCCL User Guide: Troubleshooting (GPU Direct; PCI Access Control Services; Shared memory, Docker)"
NCCL_ENV_SOURCE = "NCCL User Guide: Environment Variables (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_IB_DISABLE)"
GIB = 1024**3
# NCCL's troubleshooting guide gives `--shm-size=1g` for a container running NCCL; DataLoader
# workers of every rank use the same /dev/shm, so cudadoctor asks for 1 GiB per GPU of the job.
SHM_PER_GPU = GIB
_FABRIC_SETUP = "`sudo systemctl enable --now nvidia-fabricmanager`"


def in_scope(ctx: CheckContext) -> bool:
    """Whether the multi-GPU checks judge this run: two or more GPUs, or --gpus-per-job."""
    return ctx.gpus_per_job is not None or len(ctx.host.gpus_in_scope) >= 2


def job_gpus(ctx: CheckContext) -> tuple[GpuFacts, ...]:
    return tuple(g for g in ctx.host.gpus_in_scope if not g.lost)


def job_size(ctx: CheckContext) -> int:
    return ctx.gpus_per_job if ctx.gpus_per_job is not None else len(job_gpus(ctx))


def interconnect(ctx: CheckContext) -> Optional[InterconnectFacts]:
    system = ctx.host.system
    return system.interconnect if system is not None else None


def _gpus_words(gpus: Sequence[GpuFacts]) -> str:
    indices = [g.index for g in gpus]
    return f"GPU {indices[0]}" if len(indices) == 1 else f"GPUs {index_ranges(indices)}"


def _size(n: int) -> str:
    return f"{n / GIB:g} GiB" if n >= GIB else f"{n / 1024**2:g} MiB"


# ---- the NVSwitch fabric ----------------------------------------------------------------------


def check_fabric(ctx: CheckContext) -> list[Finding]:
    fabric = [g for g in ctx.facts.gpus if g.fabric is not None and g.fabric.state != "not-supported"]
    if not fabric:
        return []
    driver = ctx.facts.driver.driver_version
    branch = driver.split(".")[0] if driver else None
    match = f" (the package of driver {driver}'s branch, nvidia-fabricmanager-{branch}; the versions must match)" if branch else ""
    waiting = [g for g in fabric if g.fabric is not None and g.fabric.state in (FABRIC_NOT_STARTED, FABRIC_IN_PROGRESS)]
    failed = [g for g in fabric if g.fabric is not None and g.fabric.state == FABRIC_COMPLETED and g.fabric.status not in (None, 0)]
    findings = []
    if waiting:
        started = all(g.fabric is not None and g.fabric.state == FABRIC_IN_PROGRESS for g in waiting)
        findings.append(
            Finding(
                code="fabric-not-ready",
                severity=FAIL,
                title=f"The NVSwitch fabric is {'still being set up' if started else 'not started'} for {_gpus_words(waiting)}: "
                    "CUDA fails with \"system not yet initialized\"",
                detail="On an NVSwitch system (HGX/DGX) the GPUs reach each other only through the fabric that NVIDIA "
                    "Fabric Manager configures; until it has, CUDA initialisation fails with cudaErrorSystemNotReady "
                    "(torch: \"CUDA error: system not yet initialized\")"
                    + (" and the fabric is in progress: Fabric Manager is running but has not finished." if started else
                       ": Fabric Manager is not running, or stopped (a driver upgrade without its matching Fabric Manager)."),
                hint=f"Start the fabric manager: {_FABRIC_SETUP}{match}; `nvidia-smi -q | grep -A 3 Fabric` then says "
                    "State: Completed, Status: Success."
                    if not started else
                    "Wait for Fabric Manager to finish (`nvidia-smi -q | grep -A 3 Fabric` says State: Completed); if it does "
                    f"not, read `journalctl -u nvidia-fabricmanager`{match}.",
                source=FABRIC_SOURCE,
            )
        )
    if failed:
        codes = sorted({g.fabric.status for g in failed if g.fabric is not None and g.fabric.status is not None})
        findings.append(
            Finding(
                code="fabric-registration-failed",
                severity=FAIL,
                title=f"{_gpus_words(failed)} failed to register with the NVSwitch fabric (NVML status {', '.join(map(str, codes))})",
                detail="A GPU that fails to register with the fabric loses its NVLink peer-to-peer access: CUDA may "
                    "start, but NCCL between it and the other GPUs falls back to PCIe or host memory, or fails.",
                hint=f"Read `journalctl -u nvidia-fabricmanager` (a Fabric Manager of another version than driver {driver or '?'}, "
                    "NVLink or NVSwitch errors); restart it with `sudo systemctl restart nvidia-fabricmanager`, or reset the GPUs.",
                source=FABRIC_SOURCE,
            )
        )
    if not findings and all(g.fabric is not None and g.fabric.state == FABRIC_COMPLETED for g in fabric):
        findings.append(
            Finding(
                code="fabric-ok",
                severity=OK,
                title=f"The NVSwitch fabric is set up for {_gpus_words(fabric)}",
                source=FABRIC_SOURCE,
            )
        )
    return findings


# ---- the path between the job's GPUs ----------------------------------------------------------


def check_paths(ctx: CheckContext) -> list[Finding]:
    if not in_scope(ctx):
        return []
    gpus = job_gpus(ctx)
    wanted = ctx.gpus_per_job
    findings = []
    if wanted is not None and wanted > len(gpus):
        findings.append(
            Finding(
                code="multi-gpu-job-too-large",
                severity=FAIL,
                title=f"A job of {wanted} GPUs cannot run here: CUDA sees {len(gpus)}",
                detail="torchrun --nproc-per-node with more processes than GPUs fails with \"CUDA error: invalid device "
                    "ordinal\" (or ranks share a GPU, which NCCL refuses: \"Duplicate GPU detected\").",
                hint=f"Run jobs of at most {len(gpus)} GPUs here"
                    + (" (or widen CUDA_VISIBLE_DEVICES)" if len(gpus) < len(ctx.facts.gpus) else "") + ".",
                source=NVML_SOURCE,
            )
        )
    if len(gpus) < 2:
        return findings
    matrix = pair_matrix(gpus)  # worked out once: the path finding reads it too
    path = path_finding(ctx, gpus, wanted, matrix)
    findings.append(path)
    if matrix is None:
        return findings
    by_index = {g.index: g for g in gpus}
    blocked = []
    slow_sockets = []
    one_socket: dict[tuple[int, int], str] = {}
    seen: set[tuple[int, int]] = set()
    for gpu in gpus:
        for peer in gpu.peers or ():
            tier = matrix.get((gpu.index, peer.index))
            if tier is None or (gpu.index, peer.index) in seen:  # itself, a GPU outside the job, a pair listed twice
                continue
            seen.add((gpu.index, peer.index))
            if peer.link is not None and peer.link != LINK_SYSTEM:
                one_socket[(gpu.index, peer.index)] = "socket"
            if tier == TIER_HOST:
                blocked.append((gpu.index, peer.index, peer.p2p_read or "unknown"))
            elif peer.link == LINK_SYSTEM and tier != TIER_NVLINK:
                slow_sockets.append((gpu.index, peer.index))
    if blocked:
        reasons = sorted({reason for _, _, reason in blocked})
        pairs = ", ".join(f"{a}-{b}" for a, b, _ in blocked[:12]) + (f" and {len(blocked) - 12} more" if len(blocked) > 12 else "")
        findings.append(
            Finding(
                code="p2p-unavailable",
                severity=WARN,
                title=f"No peer-to-peer access between {len(blocked)} GPU pair(s) ({', '.join(reasons)})",
                detail=f"Pairs {pairs}: NVML reports P2P as {', '.join(reasons)}. NCCL then moves their data through host "
                    "memory (its SHM transport): every all-reduce crosses the CPU's memory twice, typically several times "
                    "slower than PCIe peer-to-peer and an order of magnitude below NVLink. "
                    + _P2P_REASONS.get(reasons[0], ""),
                hint=_P2P_FIX.get(reasons[0], "Pin jobs to GPUs that have peer-to-peer (see multi-gpu-path)."),
                source=f"{NVML_SOURCE}; {NCCL_TROUBLESHOOTING}",
            )
        )
    if slow_sockets:
        sockets = islands(list(by_index), one_socket, ("socket",))
        findings.append(
            Finding(
                code="multi-gpu-cross-socket",
                severity=WARN,
                title=f"GPUs {said_together([index_ranges(g) for g in sockets])} sit on different CPU sockets, with no NVLink between them",
                detail="Peer-to-peer between them crosses the link between the sockets (SYS in `nvidia-smi topo -m`), "
                    "which is slower than PCIe within one socket: all-reduce over these pairs sets the job's pace.",
                hint="Pin jobs to the GPUs of one socket (see multi-gpu-path), and bind each rank to its GPU's NUMA node.",
                source=NVML_SOURCE,
            )
        )
    return findings


_P2P_REASONS = {
    "topology-not-supported": "The PCIe topology has no peer-to-peer route between them (commonly: GPUs on different CPU sockets).",
    "chipset-not-supported": "The chipset does not support peer-to-peer between these GPUs.",
    "gpu-not-supported": "These GPUs do not support peer-to-peer (GeForce cards from the RTX 40 series on, for example).",
    "disabled-by-regkey": "Peer-to-peer is turned off in the driver's registry keys (RmP2PDisable or a vendor setting).",
}
_P2P_FIX = {
    "disabled-by-regkey": "Remove the driver option that disables P2P (look in /etc/modprobe.d for NVreg_RegistryDwords), or pin jobs to one group (see multi-gpu-path).",
    "chipset-not-supported": "Check the BIOS for PCIe ACS and IOMMU settings (NCCL's troubleshooting guide); else pin jobs to one group (see multi-gpu-path).",
}


def path_finding(
    ctx: CheckContext, gpus: Sequence[GpuFacts], wanted: Optional[int], matrix: Optional[dict[tuple[int, int], str]]
) -> Finding:
    """The one sentence the answer shows: how the job's GPUs exchange data (``matrix``: their
    pair_matrix), and what to do."""
    count = len(gpus)
    waiting = [g for g in gpus if g.fabric is not None and g.fabric.state in (FABRIC_NOT_STARTED, FABRIC_IN_PROGRESS)]
    if waiting:  # the pairs say "through the CPU", but the cause and its fix are the fabric's
        return Finding(
            code="multi-gpu-path",
            severity=WARN,
            title=f"{count} GPUs on an NVSwitch fabric that is not ready: no NVLink between them until Fabric Manager has set it up",
            detail="Until the fabric is configured the GPUs have no NVLink peers (and CUDA does not start).",
            hint=f"Start the fabric manager ({_FABRIC_SETUP}, the package of the driver's own version), then run cudadoctor again.",
            source=FABRIC_SOURCE,
        )
    if matrix is None:
        return Finding(
            code="multi-gpu-path",
            severity=INFO,
            title=f"{count} GPUs: how they reach each other is not known",
            detail="NVML gave no peer-to-peer status for some pair (a what-if plan, a snapshot from an older cudadoctor, "
                "or a driver without nvmlDeviceGetP2PStatus).",
            hint="Probe the host itself (`cudadoctor probe --output host.json` there), or read `nvidia-smi topo -m`.",
            source=NVML_SOURCE,
        )
    tiers = set(matrix.values())
    indices = [g.index for g in gpus]
    if tiers == {TIER_NVLINK}:
        return Finding(code="multi-gpu-path", severity=OK, title=f"{count} GPUs, all pairs over NVLink: ready", source=NVML_SOURCE)
    if TIER_HOST not in tiers:
        linked = [g for g in islands(indices, matrix, (TIER_NVLINK,)) if len(g) > 1]
        title = (
            f"{count} GPUs, NVLink within {said_together([index_ranges(g) for g in linked])}, PCIe peer-to-peer between: ready"
            if linked else f"{count} GPUs, all pairs over PCIe peer-to-peer: ready"
        )
        return Finding(code="multi-gpu-path", severity=OK, title=title, source=NVML_SOURCE)
    groups = islands(indices, matrix)
    need = wanted or 2
    if all(len(g) == 1 for g in groups):
        return Finding(
            code="multi-gpu-path",
            severity=WARN,
            title=f"No pair of the {count} GPUs has peer-to-peer: all traffic goes through the CPU; expect slow all-reduce",
            detail="NCCL copies every exchange through host memory (its SHM transport). See p2p-unavailable for NVML's reason.",
            hint="Check the BIOS (PCIe ACS, IOMMU) and the driver's P2P settings (NCCL's troubleshooting guide).",
            source=f"{NVML_SOURCE}; {NCCL_TROUBLESHOOTING}",
        )
    parts = said_together([index_ranges(g) for g in groups])
    fits = [g for g in groups if len(g) >= need]
    word = "half" if len(groups) == 2 and len(groups[0]) == len(groups[1]) else "group"
    if not fits:
        return Finding(
            code="multi-gpu-path",
            severity=WARN,
            title=f"GPUs {parts} talk through the CPU: expect slow all-reduce; no {word} holds a job of {need} GPUs",
            detail=f"Peer-to-peer works within each group, not between them; a job of {need} GPUs spans groups and NCCL "
                "moves its data through host memory.",
            hint=f"Run jobs of at most {len(groups[0])} GPUs, each within one group, or fix peer-to-peer (see p2p-unavailable).",
            source=f"{NVML_SOURCE}; {NCCL_TROUBLESHOOTING}",
        )
    chosen = fits[0][: wanted or len(fits[0])]
    excluded = [g for g in gpus if g.index not in chosen]
    pin = ctx.host.visible_devices_excluding(excluded) or f"CUDA_VISIBLE_DEVICES={','.join(map(str, chosen))}"
    return Finding(
        code="multi-gpu-path",
        severity=WARN,
        title=f"GPUs {parts} talk through the CPU: expect slow all-reduce; pin jobs to one {word} with {pin}",
        detail="Peer-to-peer works within each group, not between them (see p2p-unavailable): a job spanning groups "
            "has NCCL move its data through host memory.",
        hint=f"Start each job with {pin} (or the GPUs of another group), or fix peer-to-peer between the groups.",
        source=f"{NVML_SOURCE}; {NCCL_TROUBLESHOOTING}",
    )


# ---- the job's GPUs: alike, whole --------------------------------------------------------------


def check_job_gpus(ctx: CheckContext) -> list[Finding]:
    if not in_scope(ctx):
        return []
    gpus = job_gpus(ctx)
    findings = []
    names = sorted({g.name for g in gpus if g.name})
    memories = sorted({g.memory_total_bytes for g in gpus if g.memory_total_bytes})
    if len(gpus) >= 2 and (len(names) > 1 or len(memories) > 1):
        what = f"models {', '.join(names)}" if len(names) > 1 else f"memory sizes {', '.join(_size(m) for m in memories)}"
        findings.append(
            Finding(
                code="multi-gpu-mixed",
                severity=WARN,
                title=f"The job's GPUs differ: {what}",
                detail="DDP and FSDP give every rank the same work: the slowest GPU sets the pace, and the smallest "
                    "memory sets the batch (FSDP shards evenly, so the smaller GPU runs out of memory first).",
                hint="Pin jobs to GPUs of one model with CUDA_VISIBLE_DEVICES (CUDA_DEVICE_ORDER=PCI_BUS_ID numbers them as nvidia-smi does).",
                source=NVML_SOURCE,
            )
        )
    mig = [g for g in gpus if g.mig_enabled]
    if mig:
        findings.append(
            Finding(
                code="multi-gpu-mig",
                severity=FAIL if ctx.gpus_per_job and ctx.gpus_per_job > 1 else WARN,
                title=f"MIG is on for {_gpus_words(mig)}: a multi-GPU job cannot span MIG instances",
                detail="A CUDA process sees one MIG instance at most, and NCCL does not communicate between MIG "
                    "instances: DDP across them fails or falls back to a single device.",
                hint="Turn MIG off for multi-GPU jobs: `sudo nvidia-smi -i <GPU> -mig 0` (then reset the GPU), or run one job per instance.",
                source="NVIDIA MIG User Guide (CUDA device enumeration; no peer-to-peer or NCCL between instances)",
            )
        )
    for gpu in gpus:
        if gpu.nvlink_links and gpu.nvlink_active is not None and gpu.nvlink_active < gpu.nvlink_links:
            findings.append(
                Finding(
                    code="nvlink-down",
                    severity=WARN,
                    title=f"GPU {gpu.index}: {gpu.nvlink_links - gpu.nvlink_active} of its {gpu.nvlink_links} NVLink links are down",
                    detail="Traffic over NVLink runs on the remaining links at reduced bandwidth, or falls back to PCIe.",
                    hint="`nvidia-smi nvlink --status` and `nvidia-smi nvlink -e` (errors); reseat the bridge, or have the board serviced.",
                    source=NVML_SOURCE,
                    gpu_index=gpu.index,
                )
            )
    return findings


# ---- the system: NCCL's settings, /dev/shm, memlock, InfiniBand, IOMMU, the NCCL build -----------


def _on(value: Optional[str]) -> bool:
    return value is not None and value.strip() not in ("", "0")


def check_system(ctx: CheckContext) -> list[Finding]:
    if not in_scope(ctx):
        return []
    facts = interconnect(ctx)
    if facts is None:
        return []
    n = job_size(ctx)
    findings = []
    if _on(facts.nccl_env("NCCL_P2P_DISABLE")):
        findings.append(
            Finding(
                code="p2p-disabled-by-env",
                severity=WARN,
                title=f"NCCL_P2P_DISABLE={facts.nccl_env('NCCL_P2P_DISABLE')}: NCCL will not use peer-to-peer, NVLink included",
                detail="Every exchange between the job's GPUs goes through host memory instead: all-reduce runs several "
                    "times slower than over PCIe P2P, an order of magnitude slower than over NVLink. It is often left "
                    "over from a workaround for a hang.",
                hint="Unset it (`unset NCCL_P2P_DISABLE`); if jobs hang without it, fix P2P instead (iommu-translated, p2p-unavailable).",
                source=NCCL_ENV_SOURCE,
            )
        )
    for name, what in (("NCCL_SHM_DISABLE", "its shared-memory transport"), ("NCCL_IB_DISABLE", "InfiniBand/RoCE")):
        if _on(facts.nccl_env(name)) and (name != "NCCL_IB_DISABLE" or facts.infiniband):
            findings.append(
                Finding(
                    code="nccl-transport-disabled",
                    severity=WARN if name == "NCCL_SHM_DISABLE" else INFO,
                    title=f"{name}={facts.nccl_env(name)}: NCCL will not use {what}",
                    detail="NCCL_SHM_DISABLE leaves GPUs without peer-to-peer only the network stack (sockets) between them."
                        if name == "NCCL_SHM_DISABLE" else
                        "Jobs across hosts fall back to TCP sockets although RDMA devices are present.",
                    hint=f"Unset it (`unset {name}`) unless it is there on purpose.",
                    source=NCCL_ENV_SOURCE,
                )
            )
    need = max(1, n) * SHM_PER_GPU
    if facts.shm_bytes is not None and facts.shm_bytes < need:
        findings.append(
            Finding(
                code="shm-too-small",
                severity=WARN,
                title=f"/dev/shm is {_size(facts.shm_bytes)}: too small for a job of {n} GPUs (at least {_size(need)})",
                detail="NCCL creates its shared-memory segments in /dev/shm (\"NCCL WARN Error: failed to extend "
                    "/dev/shm/nccl-... to ... bytes\", then NCCL fails to initialise), and PyTorch DataLoader workers of "
                    "every rank pass batches through it (\"Unexpected bus error encountered in worker\").",
                hint=f"In a container: `docker run --shm-size={max(1, n)}g` (or `--ipc=host`); on a host: "
                    f"`sudo mount -o remount,size={max(1, n) * 2}G /dev/shm` (and in /etc/fstab).",
                source=f"{NCCL_TROUBLESHOOTING}; cudadoctor's rule of thumb: 1 GiB per GPU",
            )
        )
    if facts.infiniband and facts.memlock_unlimited is False:
        findings.append(
            Finding(
                code="memlock-too-low",
                severity=WARN,
                title=f"Locked memory is limited to {_size(facts.memlock_bytes or 0)} with InfiniBand/RoCE present",
                detail="RDMA registers (pins) its buffers: with a low RLIMIT_MEMLOCK NCCL's InfiniBand transport fails "
                    "(\"NET/IB : ... ibv_reg_mr failed\", \"Cannot allocate memory\") or falls back to sockets.",
                hint="In a container: `docker run --ulimit memlock=-1`; on a host: `ulimit -l unlimited` "
                    "(memlock unlimited in /etc/security/limits.conf, LimitMEMLOCK=infinity for systemd services).",
                source=NCCL_TROUBLESHOOTING,
            )
        )
    if facts.infiniband and facts.peermem_loaded is False:
        names = ", ".join(d.name for d in facts.infiniband[:4])
        findings.append(
            Finding(
                code="ib-no-peermem",
                severity=WARN,
                title=f"InfiniBand/RoCE devices ({names}) without nvidia_peermem: no GPUDirect RDMA",
                detail="Without the nvidia-peermem module NCCL stages every network transfer through host memory "
                    "(NCCL_DEBUG=INFO prints \"GPU Direct RDMA Disabled\"), lowering multi-node bandwidth.",
                hint="`sudo modprobe nvidia-peermem` (and load it at boot: /etc/modules-load.d); recent NCCL with the open "
                    "kernel module can use DMA-BUF instead.",
                source=NCCL_TROUBLESHOOTING,
            )
        )
    if facts.iommu == "translated":
        findings.append(
            Finding(
                code="iommu-translated",
                severity=WARN,
                title="The IOMMU translates the GPUs' DMA: peer-to-peer may stall or crawl",
                detail="With DMA remapping (VT-d/AMD-Vi in translated mode) PCIe peer-to-peer messages are redirected "
                    "through the root complex; NCCL's troubleshooting guide names this as a cause of hangs and poor "
                    "P2P bandwidth (all-reduce that never finishes, nccl-tests stuck).",
                hint="Boot with `iommu=pt` (passthrough; keeps the IOMMU for VMs), or turn off PCIe ACS in the BIOS; as a "
                    "last resort NCCL_P2P_DISABLE=1 (slow).",
                source=NCCL_TROUBLESHOOTING,
            )
        )
    findings += _nccl_driver(ctx, facts)
    return findings


def _nccl_driver(ctx: CheckContext, facts: InterconnectFacts) -> list[Finding]:
    package = facts.nccl_package
    if not package or not package.startswith("nvidia-nccl-cu") or not package[len("nvidia-nccl-cu"):].isdigit():
        return []
    major = int(package[len("nvidia-nccl-cu"):])
    support = ctx.host.support(CudaVersion((major, 0)))
    if support.tier != "too-old":
        return []
    return [
        Finding(
            code="nccl-driver-too-old",
            severity=FAIL,
            title=f"The NCCL next to the installed torch ({package} {facts.nccl_version}) needs a CUDA {major} driver; "
                f"driver {support.driver} is older",
            detail=f"{package} is built for CUDA {major}: below driver {support.compat_min} (CUDA {major}'s minor-version "
                "compatibility floor) NCCL fails to initialise (\"ncclUnhandledCudaError: ... CUDA driver version is "
                "insufficient for CUDA runtime version\").",
            hint=(out_of_reach(ctx.host, support.compat_min) or f"Upgrade the driver to >= {support.compat_min}")
                + ", or install a torch built for the driver's CUDA (`cudadoctor recommend --wheel`).",
            source="NVIDIA CUDA Toolkit Release Notes, Table 2/3 (driver minimums) via the compatibility table",
        )
    ]
