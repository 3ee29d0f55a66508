"""The system settings multi-GPU jobs depend on: /dev/shm's size, RLIMIT_MEMLOCK, the IOMMU's mode
for the GPUs, InfiniBand/RoCE devices and nvidia_peermem, the NCCL_* variables that turn NCCL's
transports off, and the NCCL wheel installed next to torch (its dist-info; torch is not imported).

Read below the same root as probe/system.py (``/``, or a fixture tree in tests): /proc/self/mounts
and /proc/self/limits are this process's own view, so inside a container they are the container's.
Every read is guarded; nothing here raises.
"""

from __future__ import annotations

import os
import re

from ..model.topology import InfinibandDeviceFacts, InterconnectFacts
from .torch_probe import find_torch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional, Sequence

# The NCCL knobs that turn a transport off or narrow where it is used (NCCL's environment variables).
NCCL_VARIABLES = (
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL",
    "NCCL_SHM_DISABLE",
    "NCCL_IB_DISABLE",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NVLS_ENABLE",
)
_NCCL_DIST = re.compile(r"^nvidia_nccl_(cu\d+)-([0-9][^-]*)\.dist-info$", re.ASCII)
_SIZE = re.compile(r"^(\d+)([kmgt]?)$", re.ASCII)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def _read(root: str, absolute: str, limit: int = 262144) -> Optional[str]:
    try:
        with open(os.path.join(root, absolute.lstrip("/")), encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except (OSError, ValueError):
        return None


def _listdir(root: str, absolute: str) -> Optional[list[str]]:
    try:
        return sorted(os.listdir(os.path.join(root, absolute.lstrip("/"))))
    except OSError:
        return None


def shm_size(root: str) -> Optional[int]:
    """/dev/shm's size: a tmpfs size= option in the mount table, else (on the real root) statvfs."""
    for line in (_read(root, "/proc/self/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "/dev/shm":
            for option in parts[3].split(","):
                if option.startswith("size="):
                    match = _SIZE.match(option[5:].lower())
                    if match:
                        return int(match.group(1)) * _UNITS[match.group(2)]
    if root != "/":
        return None  # a fixture's directory says nothing about a tmpfs
    try:
        stat = os.statvfs("/dev/shm")
    except (OSError, AttributeError):
        return None
    return stat.f_blocks * stat.f_frsize


def memlock_limit(root: str) -> tuple[Optional[int], Optional[bool]]:
    """(soft limit in bytes, unlimited) of RLIMIT_MEMLOCK, from /proc/self/limits."""
    for line in (_read(root, "/proc/self/limits") or "").splitlines():
        if line.startswith("Max locked memory"):
            words = line[len("Max locked memory") :].split()
            if not words:
                break
            if words[0] == "unlimited":
                return None, True
            if words[0].isdigit():
                return int(words[0]), False
            break
    if root != "/":
        return None, None
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    except (ImportError, OSError, ValueError, AttributeError):
        return None, None
    return (None, True) if soft == resource.RLIM_INFINITY else (int(soft), False)


def iommu_mode(root: str) -> Optional[str]:
    """How the IOMMU treats the NVIDIA devices: "translated" (DMA remapping, which routes peer-to-peer
    through the root complex), "passthrough" (identity), "off", or None (not readable here)."""
    types = []
    for address in _listdir(root, "/sys/bus/pci/devices") or []:
        base = f"/sys/bus/pci/devices/{address}"
        if (_read(root, f"{base}/vendor") or "").strip().lower() != "0x10de":
            continue
        if not (_read(root, f"{base}/class") or "").strip().lower().startswith("0x03"):
            continue
        kind = (_read(root, f"{base}/iommu_group/type") or "").strip()
        if kind:
            types.append(kind)
    if any(kind.startswith("DMA") for kind in types):
        return "translated"
    if "identity" in types:
        return "passthrough"
    units = _listdir(root, "/sys/class/iommu")
    if units is not None and not units:
        return "off"
    return None


def infiniband_devices(root: str) -> tuple[tuple[InfinibandDeviceFacts, ...], Optional[bool]]:
    if _listdir(root, "/sys/class") is None:
        return (), None
    devices = []
    for name in _listdir(root, "/sys/class/infiniband") or []:
        layer = (_read(root, f"/sys/class/infiniband/{name}/ports/1/link_layer") or "").strip() or None
        devices.append(InfinibandDeviceFacts(name=name.encode("ascii", "backslashreplace").decode("ascii"), link_layer=layer))
    return tuple(devices), True


def peermem_loaded(root: str) -> Optional[bool]:
    modules = _listdir(root, "/sys/module")
    if modules is None:
        return None
    return "nvidia_peermem" in modules or "nv_peer_mem" in modules


def nccl_wheel(paths: Optional[Sequence[str]] = None) -> tuple[Optional[str], Optional[str]]:
    """(package, version) of the nvidia-nccl-cuXX wheel in the installed torch's site directory."""
    found = find_torch(paths)
    if found is None:
        return None, None
    for name in _listdir("/", found[0]) or []:
        match = _NCCL_DIST.match(name)
        if match:
            return f"nvidia-nccl-{match.group(1)}", match.group(2)
    return None, None


def probe_interconnect(root: str, environ: Mapping[str, str], paths: Optional[Sequence[str]] = None) -> InterconnectFacts:
    try:
        memlock, unlimited = memlock_limit(root)
        infiniband, infiniband_read = infiniband_devices(root)
        package, version = nccl_wheel(paths)
        return InterconnectFacts(
            shm_bytes=shm_size(root),
            memlock_bytes=memlock,
            memlock_unlimited=unlimited,
            iommu=iommu_mode(root),
            infiniband=infiniband,
            infiniband_read=infiniband_read,
            peermem_loaded=peermem_loaded(root),
            nccl_environment=tuple((name, environ[name]) for name in NCCL_VARIABLES if name in environ),
            nccl_package=package,
            nccl_version=version,
        )
    except Exception:  # an odd /proc or /sys must not hide the other facts
        return InterconnectFacts()
