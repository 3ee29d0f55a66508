"""How the GPUs reach each other, read through NVML inside the watched NVML child (probe/nvml.py).

For every ordered pair of GPUs: the PCIe path (nvmlDeviceGetTopologyCommonAncestor) and
peer-to-peer status for read, write, NVLink and atomics (nvmlDeviceGetP2PStatus); per GPU the
NVLink links and their state (nvmlDeviceGetNvLinkState) and, on NVSwitch systems, the fabric
state (nvmlDeviceGetGpuFabricInfoV, else the older nvmlDeviceGetGpuFabricInfo).

Every call is guarded like the rest of the NVML probe: NOT_SUPPORTED, FUNCTION_NOT_FOUND or any
other failure leaves the fact unknown (None); nothing here raises.
"""

from __future__ import annotations

import ctypes

from ..model.facts import GpuFacts
from ..model.record import replace
from ..model.topology import (
    FABRIC_COMPLETED,
    FABRIC_IN_PROGRESS,
    FABRIC_NOT_STARTED,
    FABRIC_NOT_SUPPORTED,
    LINK_BOARD,
    LINK_HOST_BRIDGE,
    LINK_NUMA_NODE,
    LINK_SWITCH,
    LINK_SWITCHES,
    LINK_SYSTEM,
    P2P_CHIPSET,
    P2P_GPU,
    P2P_NOT_SUPPORTED,
    P2P_OK,
    P2P_REGKEY,
    P2P_TOPOLOGY,
    P2P_UNKNOWN,
    FabricFacts,
    GpuPeerFacts,
)

# nvml.h nvmlGpuTopologyLevel_t
LINK_WORDS = {0: LINK_BOARD, 10: LINK_SWITCH, 20: LINK_SWITCHES, 30: LINK_HOST_BRIDGE, 40: LINK_NUMA_NODE, 50: LINK_SYSTEM}
# nvml.h nvmlGpuP2PStatus_t
P2P_WORDS = {0: P2P_OK, 1: P2P_CHIPSET, 2: P2P_GPU, 3: P2P_TOPOLOGY, 4: P2P_REGKEY, 5: P2P_NOT_SUPPORTED, 6: P2P_UNKNOWN}
# nvml.h nvmlGpuP2PCapsIndex_t. Written out: pynvml 13.x defines NVML_P2P_CAPS_INDEX_READ as the
# tuple (0,) (a stray comma), which ctypes cannot pass.
P2P_READ, P2P_WRITE, P2P_NVLINK, P2P_ATOMICS = 0, 1, 2, 3
# nvml.h nvmlGpuFabricState_t
FABRIC_WORDS = {0: FABRIC_NOT_SUPPORTED, 1: FABRIC_NOT_STARTED, 2: FABRIC_IN_PROGRESS, 3: FABRIC_COMPLETED}
_NOT_SUPPORTED = 3
_FUNCTION_NOT_FOUND = 13
_VERSION_MISMATCH = 25  # NVML_ERROR_ARGUMENT_VERSION_MISMATCH
_DEFAULT_MAX_LINKS = 18  # NVML_NVLINK_MAX_LINKS before pynvml 12.570 raised it to 36

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional, Protocol

    class Guard(Protocol):
        """probe/nvml.py's _Guard: a call whose failure means unknown."""

        nvml: Any
        lost: bool

        def call(self, fn: Any, *args: Any) -> Any: ...


def _code_of(guard: Guard, fn: Any, *args: Any) -> tuple[Any, Optional[int]]:
    """(value, None) on success, (None, NVML's error code) on failure: for the calls whose
    NOT_SUPPORTED means "this GPU has none" rather than "unknown"."""
    try:
        return fn(*args), None
    except guard.nvml.NVMLError as exc:
        code = getattr(exc, "value", None)
        return None, code if isinstance(code, int) else -1
    except Exception:
        return None, -1


def read_nvlinks(guard: Guard, handle: Any) -> tuple[Optional[int], Optional[int]]:
    """(links, links up) of one GPU; (0, 0) for a GPU without NVLink, (None, None) when unknown."""
    nvml = guard.nvml
    state, code = _code_of(guard, nvml.nvmlDeviceGetNvLinkState, handle, 0)
    if code is not None:
        return (0, 0) if code == _NOT_SUPPORTED else (None, None)
    links, active = 1, int(bool(state))
    # Links are numbered from 0; the first one NVML does not know ends the GPU's links.
    for link in range(1, int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", _DEFAULT_MAX_LINKS))):
        state = guard.call(nvml.nvmlDeviceGetNvLinkState, handle, link)
        if state is None:
            break
        links += 1
        active += int(bool(state))
    return links, active


def read_fabric(guard: Guard, handle: Any) -> Optional[FabricFacts]:
    """The NVSwitch fabric as this GPU sees it; state not-supported on a GPU outside any fabric."""
    nvml = guard.nvml
    info: Any = None
    code: Optional[int] = _FUNCTION_NOT_FOUND
    if hasattr(nvml, "c_nvmlGpuFabricInfoV_t") and hasattr(nvml, "nvmlDeviceGetGpuFabricInfoV"):
        info = nvml.c_nvmlGpuFabricInfoV_t()
        _, code = _code_of(guard, nvml.nvmlDeviceGetGpuFabricInfoV, handle, ctypes.byref(info))
    # A driver without the versioned call, or without this version of its struct: the older call.
    if code in (_FUNCTION_NOT_FOUND, _VERSION_MISMATCH) and hasattr(nvml, "c_nvmlGpuFabricInfo_t"):
        info = nvml.c_nvmlGpuFabricInfo_t()
        _, code = _code_of(guard, nvml.nvmlDeviceGetGpuFabricInfo, handle, ctypes.byref(info))
    if code == _NOT_SUPPORTED:
        return FabricFacts(state=FABRIC_NOT_SUPPORTED)
    if code is not None or info is None:
        return None
    state = FABRIC_WORDS.get(int(info.state))
    if state is None:
        return None
    uuid = bytes(info.clusterUuid)
    return FabricFacts(
        state=state,
        status=int(info.status),
        clique_id=int(info.cliqueId),
        cluster_uuid=uuid.hex() if any(uuid) else None,
    )


def read_peer(guard: Guard, handle: Any, other: Any, index: int) -> GpuPeerFacts:
    nvml = guard.nvml
    level = guard.call(nvml.nvmlDeviceGetTopologyCommonAncestor, handle, other)

    def p2p(caps: int) -> Optional[str]:
        status = guard.call(nvml.nvmlDeviceGetP2PStatus, handle, other, caps)
        return P2P_WORDS.get(status, P2P_UNKNOWN) if isinstance(status, int) else None

    return GpuPeerFacts(
        index=index,
        link=LINK_WORDS.get(level) if isinstance(level, int) else None,
        p2p_read=p2p(P2P_READ),
        p2p_write=p2p(P2P_WRITE),
        p2p_nvlink=p2p(P2P_NVLINK),
        p2p_atomics=p2p(P2P_ATOMICS),
    )


def attach_topology(guard: Guard, gpus: tuple[GpuFacts, ...]) -> tuple[GpuFacts, ...]:
    """The GPUs with their NVLink, fabric and peer facts. A lost GPU (or one without a handle)
    keeps them unknown, and is nobody's peer."""
    nvml = guard.nvml
    handles: dict[int, Any] = {}
    for gpu in gpus:
        if not gpu.lost:
            handle = guard.call(nvml.nvmlDeviceGetHandleByIndex, gpu.index)
            if handle is not None:
                handles[gpu.index] = handle
    out = []
    for gpu in gpus:
        handle = handles.get(gpu.index)
        if handle is None:
            out.append(gpu)
            continue
        links, active = read_nvlinks(guard, handle)
        peers = tuple(read_peer(guard, handle, other, index) for index, other in handles.items() if index != gpu.index)
        out.append(replace(gpu, peers=peers, nvlink_links=links, nvlink_active=active, fabric=read_fabric(guard, handle)))
    return tuple(out)
