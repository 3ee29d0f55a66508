"""Fixture trees standing in for /proc, /sys, /dev and the library directories of a host.

``make_sysroot`` writes one below a directory; point cudadoctor at it with ``root=`` or
``$CUDADOCTOR_SYSROOT``. Device nodes are plain empty files: the probe only asks whether they exist.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Optional

PROC_OPEN = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {v}  Release Build  (dvs-builder@U22-I3-B17-02-5)  Tue Sep 23 09:55:41 UTC 2025"
PROC_PROPRIETARY = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  Mon Sep 12 19:21:56 UTC 2022"

H100 = ("0000:07:00.0", "0x10de", "0x2330", "0x030200")
AMD_MI300 = ("0000:c1:00.0", "0x1002", "0x74a1", "0x038000")
INTEL_ARC = ("0000:03:00.0", "0x8086", "0x56a0", "0x030000")
ASPEED_BMC = ("0000:02:00.0", "0x1a03", "0x2000", "0x030000")


def _write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_sysroot(
    root: Path,
    *,
    module: Optional[str] = "580.65.06",
    flavour: str = "proprietary",
    nodes: Iterable[str] = ("nvidiactl", "nvidia-uvm", "nvidia0"),
    pci: Iterable[tuple[str, str, str, str]] = (H100,),
    container: Optional[str] = None,  # "docker" | "podman" | "kubepods"
    wsl: bool = False,
    wsl_libs: bool = True,
    wsl_dxg: bool = True,
    libs: Iterable[str] = (),
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "sys" / "module").mkdir(parents=True, exist_ok=True)
    (root / "proc").mkdir(parents=True, exist_ok=True)
    (root / "dev").mkdir(parents=True, exist_ok=True)
    if module:
        _write(root / "sys/module/nvidia/version", module + "\n")
        if "nvidia-uvm" in nodes:
            (root / "sys/module/nvidia_uvm").mkdir(parents=True, exist_ok=True)
        line = (PROC_OPEN if flavour == "open" else PROC_PROPRIETARY).format(v=module)
        _write(root / "proc/driver/nvidia/version", line + "\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n")
    for node in nodes:
        _write(root / "dev" / node)
    for address, vendor, device, pci_class in pci:
        base = root / "sys/bus/pci/devices" / address
        _write(base / "vendor", vendor + "\n")
        _write(base / "device", device + "\n")
        _write(base / "class", pci_class + "\n")
    if container == "docker":
        _write(root / ".dockerenv")
    elif container == "podman":
        _write(root / "run/.containerenv")
    elif container:
        _write(root / "proc/1/cgroup", f"0::/{container}/pod1234/abcdef\n")
    kernel = "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) (gcc 13.2.0)"
    if wsl:
        kernel = "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc 11.2.0)"
        if wsl_libs:
            _write(root / "usr/lib/wsl/lib/libcuda.so.1")
            _write(root / "usr/lib/wsl/lib/libnvidia-ml.so.1")
        if wsl_dxg:
            _write(root / "dev/dxg")
    _write(root / "proc/version", kernel + "\n")
    for lib in libs:
        _write(root / lib.lstrip("/"))
    return root
