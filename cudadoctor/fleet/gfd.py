"""NVIDIA GPU Feature Discovery (GFD) node labels as host facts. Pure: a label mapping in, facts out.

The label set is the one GFD writes (NVIDIA/k8s-device-plugin, ``internal/lm``; formerly
NVIDIA/gpu-feature-discovery): ``nvml.go`` writes the driver labels
(``nvidia.com/cuda.driver-version.full`` and the older ``nvidia.com/cuda.driver.major/minor/rev``)
and the CUDA version the driver supports (``nvidia.com/cuda.runtime-version.*``, read from NVML's
``nvmlSystemGetCudaDriverVersion`` despite the name); ``resource.go`` writes
``nvidia.com/gpu.product`` (NVML's name with spaces replaced by ``-``, ``-MIG-<profile>`` appended
under the single MIG strategy, ``-SHARED`` under time-slicing), ``gpu.count``, ``gpu.memory``
(MiB), ``gpu.family`` and ``gpu.compute.major/minor``. GFD labels one product per node: on a node
with several kinds of GPU one kind's labels win (``mig-strategy.go`` warns "Multiple device types
detected"), so the facts below say ``count`` GPUs of that one product.

The node's platform comes from the labels the kubelet writes, ``kubernetes.io/arch`` and
``kubernetes.io/os`` (Go's ``GOARCH``/``GOOS``: ``amd64``, ``arm64``, ``linux``; the older
``beta.kubernetes.io/*`` beside them), else from the Node's ``status.nodeInfo.architecture`` and
``operatingSystem`` (the same values): PyTorch builds differ by platform (the Linux aarch64 wheels
carry other GPUs' code than the x86_64 ones), so a node's architecture is one of its facts.

What labels do not carry is left unknown rather than invented: GPU health (retired pages, ECC),
persistence mode, UUIDs and PCI addresses, the kernel module, device nodes, the environment,
Docker and torch. :data:`LABEL_GAPS` names them for the report.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from typing import Mapping, Optional

from ..model.facts import MAX_DEVICE_COUNT, MAX_MIG_PER_GPU, NVML_OK, DriverFacts, GpuFacts, HostFacts, MigDeviceFacts, SystemFacts
from ..model.numbers import is_ascii_integer
from ..model.text import quoted
from ..model.versions import DriverVersion, VersionError

PREFIX = "nvidia.com/"
DRIVER_FULL = "nvidia.com/cuda.driver-version.full"
DRIVER_MAJOR = "nvidia.com/cuda.driver.major"  # deprecated by GFD, still written beside the new ones
DRIVER_MINOR = "nvidia.com/cuda.driver.minor"
DRIVER_REV = "nvidia.com/cuda.driver.rev"
NEW_DRIVER_MAJOR = "nvidia.com/cuda.driver-version.major"
NEW_DRIVER_MINOR = "nvidia.com/cuda.driver-version.minor"
NEW_DRIVER_REV = "nvidia.com/cuda.driver-version.revision"
CUDA_FULL = "nvidia.com/cuda.runtime-version.full"
CUDA_MAJOR = "nvidia.com/cuda.runtime-version.major"
CUDA_MINOR = "nvidia.com/cuda.runtime-version.minor"
OLD_CUDA_MAJOR = "nvidia.com/cuda.runtime.major"
OLD_CUDA_MINOR = "nvidia.com/cuda.runtime.minor"
PRODUCT = "nvidia.com/gpu.product"
COUNT = "nvidia.com/gpu.count"
MEMORY = "nvidia.com/gpu.memory"
FAMILY = "nvidia.com/gpu.family"
CC_MAJOR = "nvidia.com/gpu.compute.major"
CC_MINOR = "nvidia.com/gpu.compute.minor"
MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_CAPABLE = "nvidia.com/mig.capable"
# The kubelet's well-known labels for the node's platform (and the deprecated beta ones).
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
BETA_ARCH = "beta.kubernetes.io/arch"
BETA_OS = "beta.kubernetes.io/os"
PLATFORM_LABELS = (ARCH, OS, BETA_ARCH, BETA_OS)
# Go's GOARCH names as uname's machine names (SystemFacts.machine); others are kept as they are.
MACHINE_OF_GOARCH = {"amd64": "x86_64", "arm64": "aarch64"}
GOARCH_OF_MACHINE = {machine: goarch for goarch, machine in MACHINE_OF_GOARCH.items()}

# What a host built from labels does not know (the report says so; nothing is made up for them).
LABEL_GAPS = ("gpu-brand", "gpu-health", "kernel-module", "environment", "docker", "torch")

_PLATFORM_WORD = re.compile(r"^[a-z0-9_]{1,32}$")  # a GOOS or GOARCH value
_MIG_PRODUCT = re.compile(r"-MIG-(\d+g\.\d+gb(?:\+me)?)", re.IGNORECASE)
_MIG_MIXED_COUNT = re.compile(r"^nvidia\.com/mig-([^/]+)\.count$")
_MIG_LABELS, _MIG_LABELS_AFTER = "nvidia.com/mig-", "nvidia.com/mig."  # "." follows "-": every mig-* key sorts between
MIB = 1024 * 1024


class LabelError(ValueError):
    """A GFD label whose value GFD could not have written; the message names the label."""


def has_gpu_labels(labels: Mapping[str, str]) -> bool:
    """GFD labelled this node as having NVIDIA GPUs (its driver or its GPUs)."""
    return not _GPU_LABELS.isdisjoint(labels.keys())


_GPU_LABELS = frozenset((DRIVER_FULL, DRIVER_MAJOR, NEW_DRIVER_MAJOR, CC_MAJOR, PRODUCT))


def _integer(labels: Mapping[str, str], key: str) -> Optional[int]:
    value = labels.get(key)
    if value is None:
        return None
    number = _whole_number(value) if isinstance(value, str) else None
    if number is None:
        raise LabelError(f"label {key}={quoted(str(value), 40)} is not a whole number")
    return number


@lru_cache(maxsize=4096)
def _whole_number(value: str) -> Optional[int]:
    """A label's whole number (up to 9 ASCII digits, spaces around allowed), or None: worked out
    once per value, since a fleet's nodes label a handful of counts, capabilities and sizes."""
    value = value.strip()
    return int(value) if is_ascii_integer(value, 9) else None


def _count(labels: Mapping[str, str], key: str, most: int) -> Optional[int]:
    """A count label, refused above what one host can hold (NVML reports at most
    MAX_DEVICE_COUNT GPUs): a node claiming a million GPUs is not judged GPU by GPU."""
    count = _integer(labels, key)
    if count is not None and count > most:
        raise LabelError(f"label {key}={count} counts more than {most}, more than one host holds")
    return count


def _driver_text(labels: Mapping[str, str]) -> Optional[str]:
    full = labels.get(DRIVER_FULL)
    if full is None:
        parts = [labels.get(k) for k in (NEW_DRIVER_MAJOR, NEW_DRIVER_MINOR, NEW_DRIVER_REV)]
        if parts[0] is None:
            parts = [labels.get(k) for k in (DRIVER_MAJOR, DRIVER_MINOR, DRIVER_REV)]
        if parts[0] is None:
            return None
        if parts[1] is None:
            raise LabelError(f"label {DRIVER_MAJOR} is set but {DRIVER_MINOR} is not")
        full = ".".join(str(p) for p in parts if p not in (None, ""))
    try:
        return DriverVersion.parse(str(full)).raw
    except VersionError:
        raise LabelError(f"driver version {str(full)[:40]!r} is not an NVIDIA driver version (such as 550.54.15)") from None


def _cuda_text(labels: Mapping[str, str]) -> Optional[str]:
    full = labels.get(CUDA_FULL)
    if full is not None:
        if not isinstance(full, str) or not re.match(r"^\d{1,3}\.\d{1,3}$", full.strip()):
            raise LabelError(f"label {CUDA_FULL}={str(full)[:40]!r} is not a CUDA version such as 12.4")
        return full.strip()
    major = _integer(labels, CUDA_MAJOR)
    minor = _integer(labels, CUDA_MINOR)
    if major is None:
        major, minor = _integer(labels, OLD_CUDA_MAJOR), _integer(labels, OLD_CUDA_MINOR)
    if major is None:
        return None
    return f"{major}.{minor or 0}"


def _mig_devices(labels: Mapping[str, str], match: Optional[re.Match[str]], count: Optional[int]) -> tuple[MigDeviceFacts, ...]:
    """The MIG devices the labels count: under the single strategy the product names the profile
    (``match``, of _MIG_PRODUCT in it) and gpu.count/gpu.memory are the MIG devices'; under the
    mixed one each profile has its own nvidia.com/mig-<profile>.count and .memory."""
    if match:
        memory = _integer(labels, MEMORY)
        return tuple(
            MigDeviceFacts(index=i, name=match.group(1), memory_total_bytes=memory * MIB if memory else None)
            for i in range(count if count is not None else 1)
        )
    devices: list[MigDeviceFacts] = []
    keys = sorted(labels)  # the mixed strategy's labels are one run of them, found by bisection (in C)
    for key in keys[bisect_left(keys, _MIG_LABELS) : bisect_left(keys, _MIG_LABELS_AFTER)]:
        found = _MIG_MIXED_COUNT.match(key)
        if found:
            profile = found.group(1)
            memory = _integer(labels, f"nvidia.com/mig-{profile}.memory")
            for _ in range(_count(labels, key, MAX_DEVICE_COUNT * MAX_MIG_PER_GPU) or 0):
                if len(devices) >= MAX_DEVICE_COUNT * MAX_MIG_PER_GPU:
                    raise LabelError(f"the nvidia.com/mig-*.count labels count more than {MAX_DEVICE_COUNT * MAX_MIG_PER_GPU} MIG devices")
                devices.append(MigDeviceFacts(index=len(devices), name=profile, memory_total_bytes=memory * MIB if memory else None))
    return tuple(devices)


def _gpus(labels: Mapping[str, str], hostname: Optional[str]) -> tuple[GpuFacts, ...]:
    major, minor = _integer(labels, CC_MAJOR), _integer(labels, CC_MINOR)
    if (major is None) != (minor is None):
        raise LabelError(f"only one of {CC_MAJOR} and {CC_MINOR} is set")
    if major is not None and not 1 <= major <= 99:
        raise LabelError(f"label {CC_MAJOR}={major} is not a compute capability major version")
    cc = f"{major}.{minor}" if major is not None else None
    product = labels.get(PRODUCT)
    single = _MIG_PRODUCT.search(product or "")
    count = _count(labels, COUNT, MAX_DEVICE_COUNT * MAX_MIG_PER_GPU if single else MAX_DEVICE_COUNT)
    if product is not None and len(product) > 200:
        raise LabelError(f"label {PRODUCT} is longer than a product name")
    migs = _mig_devices(labels, single, count)
    if single:
        # The labels count MIG devices, not GPUs: one GPU stands for the MIG-enabled ones.
        name = _MIG_PRODUCT.split(product or "")[0]
        return (GpuFacts(index=0, name=name, compute_capability=cc, mig_enabled=True, mig_devices=migs),)
    memory_mib = _integer(labels, MEMORY)
    memory = memory_mib * MIB if memory_mib else None
    mig_off = False if MIG_STRATEGY in labels or labels.get(MIG_CAPABLE) == "false" else None
    return _identical_gpus(product, cc, memory, mig_off, migs, count if count is not None else 1)


@lru_cache(maxsize=4096)
def _identical_gpus(
    product: Optional[str], cc: Optional[str], memory: Optional[int], mig_off: Optional[bool],
    migs: tuple[MigDeviceFacts, ...], count: int,
) -> tuple[GpuFacts, ...]:
    """The labelled node's GPUs, one per index (the first holds the MIG devices), built once for
    every node that labels the same: a fleet's nodes differ in driver far more than in GPUs, and
    records are frozen."""
    return tuple(
        GpuFacts(
            index=i,
            name=product,
            compute_capability=cc,
            memory_total_bytes=memory,
            mig_enabled=True if (migs and i == 0) else mig_off,
            mig_devices=migs if i == 0 else (),
        )
        for i in range(count)
    )


def _platform_word(value: Optional[str], where: str) -> Optional[str]:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not _PLATFORM_WORD.match(value.strip().lower()):
        raise LabelError(f"{where}={str(value)[:40]!r} is not an operating system or architecture name such as linux or amd64")
    return value.strip().lower()


def _system(labels: Mapping[str, str], node_os: Optional[str], node_arch: Optional[str]) -> Optional[SystemFacts]:
    """The node's operating system and machine (uname's name: aarch64, x86_64), or None when
    neither the labels nor the Node's nodeInfo say."""
    arch = _platform_word(labels.get(ARCH), ARCH) or _platform_word(labels.get(BETA_ARCH), BETA_ARCH)
    os_name = _platform_word(labels.get(OS), OS) or _platform_word(labels.get(BETA_OS), BETA_OS)
    arch = arch or _platform_word(node_arch, "status.nodeInfo.architecture")
    os_name = os_name or _platform_word(node_os, "status.nodeInfo.operatingSystem")
    if arch is None and os_name is None:
        return None
    return _system_facts(os_name, MACHINE_OF_GOARCH.get(arch, arch) if arch is not None else None)


@lru_cache(maxsize=256)
def _system_facts(os_name: Optional[str], machine: Optional[str]) -> SystemFacts:
    """One object per platform: a fleet's nodes run a handful (and the fleet groups by identity first)."""
    return SystemFacts(os=os_name, machine=machine)


def facts_from_labels(
    labels: Mapping[str, str],
    hostname: Optional[str] = None,
    node_os: Optional[str] = None,
    node_arch: Optional[str] = None,
) -> Optional[HostFacts]:
    """The facts GFD's labels state about a node, or None when it carries no GPU labels (a node
    without NVIDIA GPUs, or one GFD has not labelled: the fleet counts it as unknown).
    ``node_os``/``node_arch`` (the Node's ``status.nodeInfo``) stand in for missing platform labels.
    Raises LabelError for a value GFD (or the kubelet) could not have written."""
    if not has_gpu_labels(labels):
        return None
    driver = _driver_text(labels)
    cuda = _cuda_text(labels)
    gpus = _gpus(labels, hostname)
    return HostFacts(
        # GFD read these through NVML on the node, so they stand where NVML's answers would.
        driver=DriverFacts(nvml_state=NVML_OK, driver_version=driver, cuda_driver_version=cuda),
        gpus=gpus,
        hostname=hostname,
        system=_system(labels, node_os, node_arch),
    )
