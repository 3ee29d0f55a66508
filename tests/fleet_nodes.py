"""Kubernetes Node objects as `kubectl get nodes -o json` prints them, labelled the way NVIDIA's
GPU Feature Discovery labels them (label names and value formats: NVIDIA/k8s-device-plugin,
internal/lm/nvml.go and resource.go). Used by the fleet tests and benchmarks/bench_fleet.py."""

from __future__ import annotations

from typing import Any, Optional

# The CUDA version each driver branch reports (nvmlSystemGetCudaDriverVersion), as the table has it.
CUDA_OF_BRANCH = {"470": "11.4", "525": "12.0", "535": "12.2", "550": "12.4", "560": "12.6",
                  "570": "12.8", "575": "12.9", "580": "13.0", "590": "13.1", "595": "13.2", "610": "13.3",
                  "615": "13.4", "620": "13.5"}  # fmt: skip
# (NVML name, compute capability, MiB, GFD family) of the GPUs the tests put in node pools.
GPUS = {
    "H100": ("NVIDIA H100 80GB HBM3", (9, 0), 81559, "hopper"),
    "A100": ("NVIDIA A100-SXM4-80GB", (8, 0), 81920, "ampere"),
    "A100-40": ("NVIDIA A100-SXM4-40GB", (8, 0), 40960, "ampere"),
    "L40S": ("NVIDIA L40S", (8, 9), 46068, "undefined"),
    "T4": ("Tesla T4", (7, 5), 15360, "turing"),
    "V100": ("Tesla V100-SXM2-32GB", (7, 0), 32768, "volta"),
    "K80": ("Tesla K80", (3, 7), 11441, "kepler"),
    "RTX4090": ("NVIDIA GeForce RTX 4090", (8, 9), 24564, "undefined"),
    "RTX5090": ("NVIDIA GeForce RTX 5090", (12, 0), 32607, "undefined"),
}


def gfd_labels(gpu: str, driver: str, count: int = 8, mig_profile: Optional[str] = None) -> dict[str, str]:
    """The labels GFD puts on a node with ``count`` GPUs of one kind on ``driver``."""
    name, (major, minor), mib, family = GPUS[gpu]
    parts = driver.split(".")
    cuda = CUDA_OF_BRANCH[parts[0]]
    product = name.replace(" ", "-")
    labels = {
        "nvidia.com/cuda.driver.major": parts[0],
        "nvidia.com/cuda.driver.minor": parts[1],
        "nvidia.com/cuda.driver.rev": parts[2] if len(parts) > 2 else "",
        "nvidia.com/cuda.driver-version.major": parts[0],
        "nvidia.com/cuda.driver-version.minor": parts[1],
        "nvidia.com/cuda.driver-version.revision": parts[2] if len(parts) > 2 else "",
        "nvidia.com/cuda.driver-version.full": driver,
        "nvidia.com/cuda.runtime.major": cuda.split(".")[0],
        "nvidia.com/cuda.runtime.minor": cuda.split(".")[1],
        "nvidia.com/cuda.runtime-version.major": cuda.split(".")[0],
        "nvidia.com/cuda.runtime-version.minor": cuda.split(".")[1],
        "nvidia.com/cuda.runtime-version.full": cuda,
        "nvidia.com/gfd.timestamp": "1764590000",
        "nvidia.com/gpu.compute.major": str(major),
        "nvidia.com/gpu.compute.minor": str(minor),
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.family": family,
        "nvidia.com/gpu.machine": "PowerEdge-XE9680",
        "nvidia.com/gpu.memory": str(mib),
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/mig.capable": "true" if gpu.startswith(("A100", "H100")) else "false",
        "nvidia.com/mps.capable": "false",
        "nvidia.com/mig.strategy": "single" if mig_profile else "none",
    }
    if mig_profile:  # the single strategy: the product and count are the MIG devices'
        labels["nvidia.com/gpu.product"] = f"{product}-MIG-{mig_profile}"
        labels["nvidia.com/gpu.count"] = str(count * 7)
        labels["nvidia.com/gpu.memory"] = "4864"
    return labels


def node(name: str, labels: Optional[dict[str, str]] = None, arch: str = "amd64") -> dict[str, Any]:
    """A Node object with the fields kubectl prints (a trimmed but real shape)."""
    base = {
        "beta.kubernetes.io/arch": arch,
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": arch,
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "gpu-node",
        "feature.node.kubernetes.io/pci-10de.present": "true" if labels else "false",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"0b6f{abs(hash(name)) % 10**8:08d}-5b1c-4c2e-9f0a-1d2e3f4a5b6c",
            "resourceVersion": "48213377",
            "creationTimestamp": "2026-10-02T08:14:55Z",
            "labels": {**base, **(labels or {})},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": {"podCIDR": "10.244.3.0/24", "providerID": f"aws:///us-east-1a/i-{abs(hash(name)) % 10**12:012d}"},
        "status": {
            "capacity": {"cpu": "96", "memory": "2113459908Ki", "nvidia.com/gpu": (labels or {}).get("nvidia.com/gpu.count", "0"), "pods": "110"},
            "allocatable": {"cpu": "95", "memory": "2111362756Ki", "nvidia.com/gpu": (labels or {}).get("nvidia.com/gpu.count", "0"), "pods": "110"},
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                 "lastHeartbeatTime": "2026-12-01T10:00:00Z", "lastTransitionTime": "2026-10-02T08:15:30Z"},
            ],
            "addresses": [{"type": "InternalIP", "address": "10.0.3.17"}, {"type": "Hostname", "address": name}],
            "nodeInfo": {
                "architecture": arch, "operatingSystem": "linux", "osImage": "Ubuntu 22.04.5 LTS",
                "kernelVersion": "6.8.0-1019-aws", "containerRuntimeVersion": "containerd://1.7.24",
                "kubeletVersion": "v1.31.4", "kubeProxyVersion": "v1.31.4",
                "machineID": "ec2b3c1f0e4d4f7a9a1b2c3d4e5f6a7b", "systemUUID": "ec2b3c1f-0e4d-4f7a-9a1b-2c3d4e5f6a7b",
                "bootID": "5a6b7c8d-1e2f-4a3b-8c9d-0e1f2a3b4c5d",
            },
        },
    }


def node_list(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": nodes, "metadata": {"resourceVersion": ""}}


# A mixed cluster: every pool the tests reason about, a few nodes each.
POOLS = [
    ("h100-580", "H100", "580.95.05", 8, None),
    ("h100-535", "H100", "535.216.01", 8, None),
    ("a100-550", "A100", "550.127.05", 8, None),
    ("a100-mig-570", "A100-40", "570.133.20", 1, "1g.5gb"),
    ("l40s-570", "L40S", "570.133.20", 4, None),
    ("t4-525", "T4", "525.147.05", 1, None),
    ("v100-470", "V100", "470.256.02", 8, None),
    ("k80-470", "K80", "470.256.02", 4, None),
    ("rtx4090-560", "RTX4090", "560.35.03", 2, None),
    ("rtx5090-595", "RTX5090", "595.45.04", 1, None),
    ("rtx5090-560", "RTX5090", "560.35.03", 1, None),
]


def mixed_cluster(per_pool: int = 3, cpu_nodes: int = 2) -> dict[str, Any]:
    nodes = []
    for pool, gpu, driver, count, mig in POOLS:
        for i in range(per_pool):
            nodes.append(node(f"{pool}-{i}", gfd_labels(gpu, driver, count, mig)))
    for i in range(cpu_nodes):
        nodes.append(node(f"cpu-{i}"))
    return node_list(nodes)
