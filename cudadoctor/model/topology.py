"""Multi-GPU facts: how each pair of GPUs is connected, NVLink and the NVSwitch fabric per GPU, and
the system settings NCCL depends on (shared memory, locked memory, IOMMU, InfiniBand, NCCL_*).

Facts only, as the probes found them; ``None`` is unknown (a driver without the call, a snapshot
written before these fields existed). The words are cudadoctor's, mapped from NVML's enums in
cudadoctor/probe/topology.py, so snapshots stay readable without nvml.h at hand.
"""

from __future__ import annotations

from .record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

    from .facts import GpuFacts

# nvmlDeviceGetTopologyCommonAncestor, as words (nvml.h nvmlGpuTopologyLevel_t; `nvidia-smi topo -m`
# prints them as -, PIX, PXB, PHB, NODE, SYS).
LINK_BOARD = "board"  # NVML_TOPOLOGY_INTERNAL: two GPUs on one board (a dual-GPU card)
LINK_SWITCH = "pcie-switch"  # NVML_TOPOLOGY_SINGLE: one PCIe switch between them (PIX)
LINK_SWITCHES = "pcie-switches"  # NVML_TOPOLOGY_MULTIPLE: several PCIe switches, no host bridge (PXB)
LINK_HOST_BRIDGE = "host-bridge"  # NVML_TOPOLOGY_HOSTBRIDGE: through one CPU's PCIe host bridge (PHB)
LINK_NUMA_NODE = "numa-node"  # NVML_TOPOLOGY_NODE: host bridges within one NUMA node (NODE)
LINK_SYSTEM = "cross-socket"  # NVML_TOPOLOGY_SYSTEM: across CPU sockets (SYS: the inter-socket link)
LINK_LEVELS = (LINK_BOARD, LINK_SWITCH, LINK_SWITCHES, LINK_HOST_BRIDGE, LINK_NUMA_NODE, LINK_SYSTEM)

# nvmlDeviceGetP2PStatus, as words (nvml.h nvmlGpuP2PStatus_t).
P2P_OK = "ok"
P2P_CHIPSET = "chipset-not-supported"
P2P_GPU = "gpu-not-supported"
P2P_TOPOLOGY = "topology-not-supported"
P2P_REGKEY = "disabled-by-regkey"
P2P_NOT_SUPPORTED = "not-supported"
P2P_UNKNOWN = "unknown"
P2P_STATES = (P2P_OK, P2P_CHIPSET, P2P_GPU, P2P_TOPOLOGY, P2P_REGKEY, P2P_NOT_SUPPORTED, P2P_UNKNOWN)

# nvmlDeviceGetGpuFabricInfo(V)'s state (nvml.h nvmlGpuFabricState_t).
FABRIC_NOT_SUPPORTED = "not-supported"  # no NVSwitch fabric: a PCIe or NVLink-bridge GPU
FABRIC_NOT_STARTED = "not-started"
FABRIC_IN_PROGRESS = "in-progress"
FABRIC_COMPLETED = "completed"
FABRIC_STATES = (FABRIC_NOT_SUPPORTED, FABRIC_NOT_STARTED, FABRIC_IN_PROGRESS, FABRIC_COMPLETED)

# The most GPUs one multi-GPU job may name (check --gpus-per-job, api.check's gpus_per_job): the
# largest single hosts hold 8 to 16; 64 leaves room without inviting typos.
MAX_GPUS_PER_JOB = 64


@record
class GpuPeerFacts:
    """How one GPU reaches another (``index``): the PCIe path between them and peer-to-peer access
    as NVML reports it from the first GPU towards the second."""

    index: int  # the other GPU's NVML index
    link: Optional[str] = None  # one of LINK_LEVELS
    p2p_read: Optional[str] = None  # one of P2P_STATES
    p2p_write: Optional[str] = None
    p2p_nvlink: Optional[str] = None  # "ok": the two GPUs reach each other over NVLink
    p2p_atomics: Optional[str] = None


@record
class FabricFacts:
    """An NVSwitch system's fabric as one GPU sees it (nvmlDeviceGetGpuFabricInfoV)."""

    state: str  # one of FABRIC_STATES
    status: Optional[int] = None  # NVML's return code for the GPU's registration (0: success)
    clique_id: Optional[int] = None  # GPUs with the same clique (and cluster) share one NVLink domain
    cluster_uuid: Optional[str] = None


@record
class InfinibandDeviceFacts:
    """One RDMA device under /sys/class/infiniband (a ConnectX port on InfiniBand or RoCE)."""

    name: str  # "mlx5_0"
    link_layer: Optional[str] = None  # "InfiniBand" | "Ethernet" (RoCE), port 1's


@record
class InterconnectFacts:
    """The system settings multi-GPU jobs (NCCL, DataLoader workers) depend on."""

    shm_bytes: Optional[int] = None  # the size of /dev/shm
    memlock_bytes: Optional[int] = None  # RLIMIT_MEMLOCK's soft limit; None with memlock_unlimited
    memlock_unlimited: Optional[bool] = None
    iommu: Optional[str] = None  # "off" | "passthrough" | "translated" (DMA remapping of the GPUs)
    infiniband: tuple[InfinibandDeviceFacts, ...] = ()
    infiniband_read: Optional[bool] = None  # /sys/class could be read (False: unknown, not absent)
    peermem_loaded: Optional[bool] = None  # nvidia_peermem (or the older nv_peer_mem) is loaded
    nccl_environment: tuple[tuple[str, str], ...] = ()  # the NCCL_* variables that steer transports
    nccl_package: Optional[str] = None  # the NCCL wheel next to the installed torch (nvidia-nccl-cuXX)
    nccl_version: Optional[str] = None  # "2.21.5"

    def nccl_env(self, name: str) -> Optional[str]:
        for key, value in self.nccl_environment:
            if key == name:
                return value
        return None


# ---- the paths between GPUs, judged from the pair facts (pure) ----------------------------------

TIER_NVLINK = "nvlink"  # peer-to-peer over NVLink (a bridge, or an NVSwitch fabric)
TIER_PCIE = "pcie"  # peer-to-peer over PCIe
TIER_HOST = "host"  # no peer-to-peer: NCCL copies through host memory (the CPU)


def _peer(gpu: "GpuFacts", index: int) -> Optional[GpuPeerFacts]:
    for peer in gpu.peers or ():
        if peer.index == index:
            return peer
    return None


def _one_way(peer: Optional[GpuPeerFacts]) -> Optional[str]:
    if peer is None:
        return None
    if peer.p2p_nvlink == P2P_OK:
        return TIER_NVLINK
    if peer.p2p_read is None or peer.p2p_write is None:
        return None
    return TIER_PCIE if peer.p2p_read == P2P_OK and peer.p2p_write == P2P_OK else TIER_HOST


_TIER_RANK = {TIER_NVLINK: 0, TIER_PCIE: 1, TIER_HOST: 2}


def pair_tier(a: "GpuFacts", b: "GpuFacts") -> Optional[str]:
    """How GPUs ``a`` and ``b`` (GpuFacts) exchange data; the slower direction wins; None: unknown."""
    ways = [_one_way(_peer(a, b.index)), _one_way(_peer(b, a.index))]
    known = [w for w in ways if w is not None]
    if not known:
        return None
    return max(known, key=_TIER_RANK.__getitem__)


def pair_matrix(gpus: Sequence["GpuFacts"]) -> Optional[dict[tuple[int, int], str]]:
    """Every unordered pair's tier (keyed by the lower index first); None when any pair is unknown."""
    matrix: dict[tuple[int, int], str] = {}
    for i, a in enumerate(gpus):
        for b in gpus[i + 1 :]:
            tier = pair_tier(a, b)
            if tier is None:
                return None
            matrix[(min(a.index, b.index), max(a.index, b.index))] = tier
    return matrix


def islands(indices: Sequence[int], matrix: dict[tuple[int, int], str], tiers: tuple[str, ...] = (TIER_NVLINK, TIER_PCIE)) -> list[list[int]]:
    """The groups of GPUs connected by peer-to-peer paths of ``tiers`` (connected components),
    largest first, then by their first index; each group sorted."""
    parent = {i: i for i in indices}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for (a, b), tier in matrix.items():
        if tier in tiers and a in parent and b in parent:
            parent[root(a)] = root(b)
    groups: dict[int, list[int]] = {}
    for i in indices:
        groups.setdefault(root(i), []).append(i)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))


def index_ranges(indices: Sequence[int]) -> str:
    """0,1,2,3 -> "0-3"; 0,2,3,5 -> "0,2-3,5"."""
    runs: list[list[int]] = []
    for i in sorted(set(indices)):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ",".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def said_together(parts: Sequence[str]) -> str:
    """["0-3", "4-7"] -> "0-3 and 4-7"; three or more: "a, b and c"."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
