"""Operating-system facts: the nvidia kernel module, device nodes, PCI display devices, container
and WSL signs, the driver's libraries and the environment variables that steer CUDA.

Everything under /proc, /sys, /dev and the library directories is read below one root directory:
``/`` normally, a fixture tree in tests (``root=`` or ``$CUDADOCTOR_SYSROOT``). The environment
comes from ``environ`` (default: this process's). Every read is guarded; nothing here raises.
"""

from __future__ import annotations

import os
import re
import sys

from ..model.facts import (
    DRIVER_LIBRARY_NAME,
    driver_library_version,
    CudaCompatFacts,
    DeviceNodeFacts,
    KernelModuleFacts,
    LibcudaFacts,
    PciDeviceFacts,
    SystemFacts,
)
from .interconnect import probe_interconnect

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Optional

SYSROOT_ENV = "CUDADOCTOR_SYSROOT"

# The variables that change what CUDA sees or loads, recorded in the facts (and snapshots).
ENVIRONMENT_VARIABLES = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "CUDA_HOME",
    "CUDA_PATH",
    "WSL_DISTRO_NAME",
    "KUBERNETES_SERVICE_HOST",
    "container",
)

# PCI vendor ids (the PCI-SIG registry, as /sys/bus/pci/devices/*/vendor prints them).
PCI_VENDORS = {"0x10de": "nvidia", "0x1002": "amd", "0x1022": "amd", "0x8086": "intel", "0x1a03": "aspeed", "0x102b": "matrox"}

_PROC_OPEN = re.compile(r"Open Kernel Module for \S+\s+(\d+(?:\.\d+)+)", re.ASCII)
_PROC_PROPRIETARY = re.compile(r"Kernel Module\s+(\d+(?:\.\d+)+)", re.ASCII)
_LIB_DIRS = ("usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64", "usr/lib")
_CONTAINER_CGROUP_WORDS = (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"), ("containerd", "containerd"), ("lxc", "lxc"))


class _Root:
    """Paths below one root directory."""

    def __init__(self, root: str):
        self.root = root

    def path(self, absolute: str) -> str:
        return os.path.join(self.root, absolute.lstrip("/"))

    def exists(self, absolute: str) -> bool:
        return os.path.lexists(self.path(absolute))

    def isdir(self, absolute: str) -> bool:
        return os.path.isdir(self.path(absolute))

    def read(self, absolute: str, limit: int = 65536) -> Optional[str]:
        try:
            with open(self.path(absolute), encoding="utf-8", errors="replace") as handle:
                return handle.read(limit)
        except (OSError, ValueError):
            return None

    def listdir(self, absolute: str) -> list[str]:
        try:
            return sorted(os.listdir(self.path(absolute)))
        except OSError:
            return []


def sysroot(root: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> str:
    environ = os.environ if environ is None else environ
    return root or environ.get(SYSROOT_ENV) or "/"


def parse_proc_version(line: str) -> tuple[Optional[str], Optional[str]]:
    """(version, flavour) from the first line of /proc/driver/nvidia/version."""
    match = _PROC_OPEN.search(line)
    if match:
        return match.group(1), "open"
    match = _PROC_PROPRIETARY.search(line)
    if match:
        return match.group(1), "proprietary"
    return None, None


def probe_kernel_module(fs: _Root) -> KernelModuleFacts:
    sys_version = fs.read("/sys/module/nvidia/version")
    proc = fs.read("/proc/driver/nvidia/version")
    line = proc.splitlines()[0].strip() if proc and proc.strip() else None
    version, flavour = parse_proc_version(line) if line else (None, None)
    loaded: Optional[bool] = fs.exists("/sys/module/nvidia") or proc is not None
    if not loaded and not fs.isdir("/sys/module") and not fs.isdir("/proc/driver"):
        loaded = None  # neither place is readable here: unknown, not absent
    return KernelModuleFacts(
        loaded=loaded,
        version=(sys_version.strip() if sys_version and sys_version.strip() else None) or version,
        flavour=flavour,
        proc_version_line=line,
        uvm_loaded=fs.exists("/sys/module/nvidia_uvm") if loaded is not None else None,
    )


def probe_device_nodes(fs: _Root) -> DeviceNodeFacts:
    if not fs.isdir("/dev"):
        return DeviceNodeFacts()
    gpus = [f"/dev/{name}" for name in fs.listdir("/dev") if re.fullmatch(r"nvidia\d+", name, re.ASCII)]
    gpus.sort(key=lambda path: int(path[len("/dev/nvidia"):]))
    return DeviceNodeFacts(
        nvidiactl=fs.exists("/dev/nvidiactl"),
        nvidia_uvm=fs.exists("/dev/nvidia-uvm"),
        gpu_nodes=tuple(gpus),
    )


_PCI_ID = re.compile(r"0x[0-9a-f]{4,6}", re.ASCII)


def _pci_id(text: Optional[str], digits: int = 4) -> Optional[str]:
    value = (text or "").strip().lower()
    return value if _PCI_ID.fullmatch(value) and len(value) == 2 + digits else None


def probe_pci_display_devices(fs: _Root) -> tuple[PciDeviceFacts, ...]:
    devices = []
    for address in fs.listdir("/sys/bus/pci/devices"):
        base = f"/sys/bus/pci/devices/{address}"
        pci_class = (fs.read(f"{base}/class") or "").strip().lower()
        if not pci_class.startswith("0x03"):  # 0x03xxxx: display controllers (VGA, 3D, other)
            continue
        # sysfs writes these as 0x followed by hex digits; anything else (bytes that are not UTF-8,
        # a corrupted file) is unknown rather than carried into the report and snapshots.
        vendor_id = _pci_id(fs.read(f"{base}/vendor")) or ""
        device_id = _pci_id(fs.read(f"{base}/device"))
        pci_class = _pci_id(pci_class, digits=6) or pci_class[:8]
        shown_address = address.encode("ascii", "backslashreplace").decode("ascii")  # a name that is not UTF-8
        devices.append(
            PciDeviceFacts(shown_address, PCI_VENDORS.get(vendor_id, vendor_id or "unknown"), vendor_id, device_id, pci_class)
        )
    return tuple(devices)


def probe_container(fs: _Root, environ: Mapping[str, str]) -> tuple[Optional[bool], Optional[str], tuple[str, ...]]:
    evidence = []
    runtime = None
    if fs.exists("/.dockerenv"):
        evidence.append("/.dockerenv")
        runtime = "docker"
    if fs.exists("/run/.containerenv"):
        evidence.append("/run/.containerenv")
        runtime = runtime or "podman"
    if environ.get("KUBERNETES_SERVICE_HOST"):
        evidence.append("$KUBERNETES_SERVICE_HOST")
        runtime = "kubernetes"
    if environ.get("container"):
        evidence.append(f"$container={environ['container']}")
        runtime = runtime or environ["container"]
    cgroup = fs.read("/proc/1/cgroup") or ""
    for word, name in _CONTAINER_CGROUP_WORDS:
        if word in cgroup:
            evidence.append(f"/proc/1/cgroup mentions {word}")
            runtime = runtime or name
            break
    return bool(evidence), runtime, tuple(evidence)


def probe_driver_libraries(fs: _Root) -> tuple[str, ...]:
    found = []
    for directory in _LIB_DIRS:
        for name in fs.listdir("/" + directory):
            if DRIVER_LIBRARY_NAME.match(name):
                found.append(f"/{directory}/{name}")
    return tuple(found)


_COMPAT_DIR = re.compile(r"^cuda-(\d+)\.(\d+)$", re.ASCII)
_LIBCUDA_NAME = re.compile(r"^libcuda\.so(\.\d+)*$", re.ASCII)


def _ld_so_conf_entries(fs: _Root) -> set[str]:
    """The directories /etc/ld.so.conf and /etc/ld.so.conf.d/*.conf give the loader (no includes followed)."""
    entries: set[str] = set()
    texts = [fs.read("/etc/ld.so.conf") or ""]
    texts += [fs.read(f"/etc/ld.so.conf.d/{name}") or "" for name in fs.listdir("/etc/ld.so.conf.d") if name.endswith(".conf")]
    for text in texts:
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("/"):
                entries.add(line.rstrip("/"))
    return entries


def _toolkit_cuda(fs: _Root, toolkit: str) -> Optional[str]:
    """A toolkit directory's CUDA major.minor from its version.json ({"cuda": {"version": "12.4.1"}})."""
    found = re.search(r'"cuda"\s*:\s*\{[^}]*"version"\s*:\s*"(\d+)\.(\d+)', fs.read(f"{toolkit}/version.json") or "")
    return f"{found.group(1)}.{found.group(2)}" if found else None


def probe_cuda_compat(fs: _Root, ld_library_path: Optional[str], libcuda: Optional[LibcudaFacts] = None) -> tuple[CudaCompatFacts, ...]:
    """The cuda-compat packages under /usr/local/cuda-X.Y/compat (and /usr/local/cuda/compat), each
    with the CUDA it provides and whether programs here load it: its directory is on
    LD_LIBRARY_PATH or in the loader's configuration, or the libcuda this process loaded is in it."""
    path_entries = [entry.rstrip("/") for entry in (ld_library_path or "").split(":") if entry]
    conf = _ld_so_conf_entries(fs)
    loaded = (libcuda.path or "") if libcuda is not None else ""
    found = []
    for name in sorted(fs.listdir("/usr/local")):
        match = _COMPAT_DIR.match(name)
        if not match and name != "cuda":
            continue
        if name == "cuda" and os.path.islink(fs.path("/usr/local/cuda")):
            target = os.readlink(fs.path("/usr/local/cuda")).rstrip("/").rsplit("/", 1)[-1]
            if _COMPAT_DIR.match(target):
                continue  # /usr/local/cuda -> cuda-X.Y: that directory is listed under its own name
        directory = f"/usr/local/{name}/compat"
        libraries = sorted(n for n in fs.listdir(directory) if _LIBCUDA_NAME.match(n))
        if not libraries:
            continue
        versioned = [n for n in libraries if driver_library_version(n)]
        how = None
        names = (directory, fs.path(directory).rstrip("/"))  # as the host names it, and below a fixture root
        if any(loaded.startswith(name + "/") for name in names):
            how = "loaded"
        elif any(name in path_entries for name in names):
            how = "LD_LIBRARY_PATH"
        elif directory in conf:
            how = "ld.so.conf"
        found.append(CudaCompatFacts(
            directory=directory,
            cuda=f"{match.group(1)}.{match.group(2)}" if match else _toolkit_cuda(fs, f"/usr/local/{name}"),
            library=versioned[0] if versioned else libraries[0],
            in_effect=how is not None,
            how=how,
        ))
    return tuple(found)


def stub_directories(ld_library_path: Optional[str]) -> tuple[str, ...]:
    """LD_LIBRARY_PATH entries that are a CUDA toolkit's ``stubs`` directory (link-time only)."""
    entries = [entry for entry in (ld_library_path or "").split(":") if entry]
    return tuple(entry for entry in entries if "stubs" in entry.rstrip("/").split("/"))


def probe_system(
    root: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
    libcuda: Optional[LibcudaFacts] = None,
) -> SystemFacts:
    """Read the OS facts below ``root``. ``libcuda`` is probed by the caller (it loads a library
    into this process, which a fixture root cannot redirect)."""
    environ = os.environ if environ is None else environ
    try:
        fs = _Root(sysroot(root, environ))
        environment = tuple((name, environ[name]) for name in ENVIRONMENT_VARIABLES if name in environ)
        in_container, runtime, evidence = probe_container(fs, environ)
        proc_version = (fs.read("/proc/version") or "").lower()
        wsl_libs = fs.isdir("/usr/lib/wsl/lib")
        dxg = fs.exists("/dev/dxg")
        wsl = wsl_libs or dxg or "microsoft" in proc_version or bool(environ.get("WSL_DISTRO_NAME"))
        try:
            machine: Optional[str] = os.uname().machine
        except (AttributeError, OSError):
            machine = None
        return SystemFacts(
            kernel_module=probe_kernel_module(fs),
            device_nodes=probe_device_nodes(fs),
            libcuda=libcuda or LibcudaFacts(),
            environment=environment,
            in_container=in_container,
            container_runtime=runtime,
            wsl=wsl,
            pci_display_devices=probe_pci_display_devices(fs),
            ld_library_path_stubs=stub_directories(environ.get("LD_LIBRARY_PATH")),
            machine=machine,
            os=sys.platform,
            container_evidence=evidence,
            wsl_gpu_libs=wsl_libs,
            wsl_dxg=dxg,
            driver_libraries=probe_driver_libraries(fs),
            interconnect=probe_interconnect(fs.root, environ),
            cuda_compat=probe_cuda_compat(fs, environ.get("LD_LIBRARY_PATH"), libcuda),
        )
    except Exception as exc:  # a probe never raises; an odd /proc must not hide the GPU facts
        return SystemFacts(libcuda=libcuda or LibcudaFacts(), os=sys.platform, environment=(("cudadoctor-probe-error", str(exc)),))
