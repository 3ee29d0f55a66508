"""What the probes found, as frozen data (their JSON form is cudadoctor.model.snapshot).

Facts say what *is*; they carry no judgement. A probe that could not read something records
``None`` (unknown) or an error string, never raises.
"""

from __future__ import annotations

import re

from .hygiene import ImageHygiene
from .record import field, record
from .topology import FabricFacts, GpuPeerFacts, InterconnectFacts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

# NVML's state as one word, so rules can switch on it without parsing error texts.
# More GPUs than this in one host is a driver answering garbage (0xFFFFFFFF), not a machine: the
# largest NVLink systems hold 16 to 32 GPUs per operating system. The NVML probe refuses a larger
# device count, and the fleet a node label claiming more.
MAX_DEVICE_COUNT = 64
# MIG devices one GPU can be split into (NVIDIA's largest GPUs: seven 1g slices).
MAX_MIG_PER_GPU = 7

NVML_OK = "ok"
NVML_LIBRARY_MISSING = "library-missing"
NVML_DRIVER_NOT_LOADED = "driver-not-loaded"
NVML_DRIVER_MISMATCH = "driver-mismatch"
NVML_NO_PERMISSION = "no-permission"
NVML_ERROR = "error"
NVML_NOT_PROBED = "not-probed"
NVML_HUNG = "hung"  # an NVML call did not return within --nvml-timeout (the probe's child was killed)
NVML_CRASHED = "crashed"  # the probe's child died inside NVML (a signal such as SIGSEGV)
NVML_BAD_DEVICE_COUNT = "bad-device-count"  # NVML reported more GPUs than a host can hold
NVML_STATES = (
    NVML_OK,
    NVML_LIBRARY_MISSING,
    NVML_DRIVER_NOT_LOADED,
    NVML_DRIVER_MISMATCH,
    NVML_NO_PERMISSION,
    NVML_ERROR,
    NVML_NOT_PROBED,
    NVML_HUNG,
    NVML_CRASHED,
    NVML_BAD_DEVICE_COUNT,
)


@record
class MigDeviceFacts:
    """One MIG instance carved out of a GPU."""

    index: int
    uuid: Optional[str] = None
    name: Optional[str] = None
    memory_total_bytes: Optional[int] = None


@record
class GpuFacts:
    """One physical GPU as NVML (or a what-if flag) describes it. ``None`` means unknown."""

    index: int
    name: Optional[str] = None
    uuid: Optional[str] = None
    brand: Optional[str] = None  # lowercase, as libnvidia-container names brands: "tesla", "geforce", ...
    compute_capability: Optional[str] = None  # "8.6"
    memory_total_bytes: Optional[int] = None
    pci_bus_id: Optional[str] = None
    lost: bool = False  # NVML answered GPU_IS_LOST for this device
    persistence_mode: Optional[bool] = None
    mig_enabled: Optional[bool] = None
    mig_devices: tuple[MigDeviceFacts, ...] = ()
    retired_pages_pending: Optional[bool] = None
    remapped_rows_pending: Optional[bool] = None
    remapped_rows_failure: Optional[bool] = None
    ecc_uncorrectable_volatile: Optional[int] = None
    source: str = "nvml"  # "nvml" or "what-if"
    # Multi-GPU facts (cudadoctor.model.topology); None: not known (a what-if GPU, an older snapshot).
    peers: Optional[tuple[GpuPeerFacts, ...]] = None  # this GPU towards every other GPU of the host
    nvlink_links: Optional[int] = None  # NVLink links NVML reports a state for
    nvlink_active: Optional[int] = None  # ... of which are up
    fabric: Optional[FabricFacts] = None  # the NVSwitch fabric, where NVML reports one


@record
class DriverFacts:
    """The NVIDIA driver as seen through NVML."""

    nvml_state: str = NVML_NOT_PROBED  # one of NVML_STATES
    nvml_error: Optional[str] = None  # NVML's own error text, when nvml_state is not "ok"
    driver_version: Optional[str] = None  # raw, e.g. "535.104.05"
    cuda_driver_version: Optional[str] = None  # the CUDA version the driver supports, e.g. "12.2"
    nvml_version: Optional[str] = None
    source: str = "nvml"  # "nvml" or "what-if"


@record
class KernelModuleFacts:
    """The loaded nvidia kernel module, from /sys/module/nvidia and /proc/driver/nvidia."""

    loaded: Optional[bool] = None
    version: Optional[str] = None
    flavour: Optional[str] = None  # "open" | "proprietary" | None
    proc_version_line: Optional[str] = None
    uvm_loaded: Optional[bool] = None  # /sys/module/nvidia_uvm


@record
class DeviceNodeFacts:
    nvidiactl: Optional[bool] = None
    nvidia_uvm: Optional[bool] = None
    gpu_nodes: tuple[str, ...] = ()  # "/dev/nvidia0", ...


@record
class PciDeviceFacts:
    """A display/3D controller on the PCI bus (any vendor), for telling AMD/Intel-only hosts apart."""

    address: str
    vendor: str  # "nvidia" | "amd" | "intel" | hex id
    vendor_id: str
    device_id: Optional[str] = None
    pci_class: Optional[str] = None


@record
class LibcudaFacts:
    """libcuda.so.1 (the CUDA driver API), probed independently of NVML."""

    loadable: Optional[bool] = None
    path: Optional[str] = None
    driver_version: Optional[str] = None  # from cuDriverGetVersion, e.g. "12.4"
    error: Optional[str] = None
    error_code: Optional[int] = None  # CUresult of cuDriverGetVersion when it failed (34: a stub library)


@record
class CudaCompatFacts:
    """A CUDA forward-compatibility libcuda: NVIDIA's ``cuda-compat-X-Y`` package puts one under
    /usr/local/cuda-X.Y/compat (a -devel image carries /usr/local/cuda/compat). It lets an older
    data-center driver branch run CUDA X.Y, but only where the loader picks it up."""

    directory: str  # "/usr/local/cuda-12.4/compat"
    cuda: Optional[str] = None  # the CUDA it provides, "12.4" (from the directory, or the what-if)
    library: Optional[str] = None  # its versioned libcuda, "libcuda.so.550.54.15"
    in_effect: bool = False  # what programs here load: on LD_LIBRARY_PATH, in /etc/ld.so.conf.d, or the libcuda loaded
    how: Optional[str] = None  # "LD_LIBRARY_PATH" | "ld.so.conf" | "loaded" | "image" | "what-if"
    source: str = "probe"  # "probe" | "image" | "what-if"


# libnvidia-ml.so.550.54.14, libcuda.so.550.54.14: the driver's user-space libraries carry its version.
DRIVER_LIBRARY_NAME = re.compile(r"^(?:libnvidia-ml|libcuda)\.so\.(\d+\.\d+(?:\.\d+)?)\Z", re.ASCII)


def driver_library_version(path: str) -> Optional[str]:
    """The driver version in a driver library's file name, or None when the name carries none."""
    match = DRIVER_LIBRARY_NAME.match(path.rsplit("/", 1)[-1])
    return match.group(1) if match else None


@record
class SystemFacts:
    """Operating-system facts: kernel module, device nodes, environment, container and WSL."""

    kernel_module: KernelModuleFacts = field(default_factory=KernelModuleFacts)
    device_nodes: DeviceNodeFacts = field(default_factory=DeviceNodeFacts)
    libcuda: LibcudaFacts = field(default_factory=LibcudaFacts)
    environment: tuple[tuple[str, str], ...] = ()  # the variables that matter, as (name, value)
    in_container: Optional[bool] = None
    container_runtime: Optional[str] = None  # "docker" | "podman" | "kubernetes" | ...
    wsl: Optional[bool] = None
    pci_display_devices: tuple[PciDeviceFacts, ...] = ()
    ld_library_path_stubs: tuple[str, ...] = ()  # CUDA stubs directories found on LD_LIBRARY_PATH
    machine: Optional[str] = None  # "x86_64", "aarch64"
    os: Optional[str] = None  # "linux", ...
    container_evidence: tuple[str, ...] = ()  # what gave the container away: "/.dockerenv", ...
    wsl_gpu_libs: Optional[bool] = None  # /usr/lib/wsl/lib (the Windows driver's libraries) is there
    wsl_dxg: Optional[bool] = None  # /dev/dxg (the GPU paravirtualisation device) is there
    driver_libraries: tuple[str, ...] = ()  # versioned libnvidia-ml.so.* / libcuda.so.* in the system lib dirs
    interconnect: Optional[InterconnectFacts] = None  # /dev/shm, memlock, IOMMU, InfiniBand, NCCL (multi-GPU)
    cuda_compat: tuple[CudaCompatFacts, ...] = ()  # cuda-compat libcuda packages found, and whether each is in effect

    def env(self, name: str) -> Optional[str]:
        for key, value in self.environment:
            if key == name:
                return value
        return None


@record
class DockerFacts:
    """The Docker Engine as seen from this host."""

    state: str = "not-probed"  # "ok" | "unreachable" | "permission-denied" | "timeout" | "error" | "unexpected-answer" | "not-probed"
    error: Optional[str] = None
    host: Optional[str] = None  # the endpoint used (DOCKER_HOST or the default socket)
    server_version: Optional[str] = None
    runtimes: tuple[str, ...] = ()
    default_runtime: Optional[str] = None
    cdi_spec_dirs: tuple[str, ...] = ()
    cdi_nvidia_specs: tuple[str, ...] = ()  # spec files that declare nvidia.com/gpu
    toolkit_binaries: tuple[str, ...] = ()  # nvidia-ctk, nvidia-container-cli, ... found on the host
    toolkit_config: Optional[str] = None
    os_type: Optional[str] = None
    architecture: Optional[str] = None
    api_version: Optional[str] = None
    daemon_local: Optional[bool] = None  # a unix socket on this machine (host files describe the daemon's host)
    toolkit_mode: Optional[str] = None  # [nvidia-container-runtime] mode in the toolkit's config.toml
    toolkit_disable_require: Optional[bool] = None  # disable-require in the toolkit's config.toml
    timeout_s: Optional[float] = None  # the bound every Docker call ran under


@record
class SmokeFacts:
    """The outcome of running an image once with GPUs requested (``check --smoke``)."""

    ran: bool = False  # the container started
    exit_code: Optional[int] = None
    error: Optional[str] = None  # Docker's or the probe's error text, verbatim
    output: Optional[str] = None  # the container's last output lines
    torch_version: Optional[str] = None
    torch_cuda: Optional[str] = None
    cuda_available: Optional[bool] = None
    device_count: Optional[int] = None
    cuda_op_ok: Optional[bool] = None


@record
class ImageFacts:
    """A container image as the Docker daemon describes it (``check --image REF``)."""

    reference: str
    state: str = "not-probed"  # "ok" | "not-found" | "pull-failed" | "error" | "not-probed"
    error: Optional[str] = None
    pulled: bool = False
    id: Optional[str] = None
    os: Optional[str] = None
    architecture: Optional[str] = None
    variant: Optional[str] = None
    env: tuple[tuple[str, str], ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    facts_from: Optional[str] = None  # where torch/CUDA came from: "image-env" | "image-tag" | "table"
    smoke: Optional[SmokeFacts] = None
    hygiene: Optional[ImageHygiene] = None  # its user, command and sshd/Jupyter files (cudadoctor.model.hygiene)
    # The arch list of the torch inside it (TORCH_CUDA_ARCH_LIST words: "8.0", "9.0+PTX"), read from its
    # torch/lib/libtorch_cuda*.so without running it; None: no CUDA torch found, or not read.
    torch_arch_list: Optional[tuple[str, ...]] = None
    torch_binary_error: Optional[str] = None  # why that library could not be read

    def env_value(self, name: str) -> Optional[str]:
        for key, value in self.env:
            if key == name:
                return value
        return None


@record
class TorchExtensionFacts:
    """A package installed beside a CUDA torch that depends on it and carries GPU code (flash-attn,
    xformers, a team's own), with the targets its binaries were read to carry."""

    name: str
    version: Optional[str] = None
    arch_list: tuple[str, ...] = ()  # ("sm_80", "sm_90", "compute_90"), as TorchFacts.arch_list
    error: Optional[str] = None  # one of its binaries could not be read


@record
class TorchFacts:
    """An installed torch, from its package metadata (cheap) and, when asked, from importing it."""

    installed: bool = False
    version: Optional[str] = None  # "2.5.1+cu121"
    variant: Optional[str] = None  # "cu121" | "cpu" | "rocm6.2" | None (unknown)
    cuda: Optional[str] = None  # "12.1" (torch.version.cuda)
    location: Optional[str] = None
    runtime_probed: bool = False
    arch_list: tuple[str, ...] = ()  # ("sm_50", ..., "sm_90", "compute_90")
    cudnn: Optional[str] = None
    nccl: Optional[str] = None
    cuda_available: Optional[bool] = None
    device_count: Optional[int] = None
    cuda_error: Optional[str] = None
    runtime_error: Optional[str] = None  # the runtime probe itself failed: import error, timeout
    # Where arch_list comes from: "binary" (read from torch/lib/libtorch_cuda*.so's fat binaries,
    # without importing torch), "runtime" (torch.cuda.get_arch_list(), --torch-runtime), None (empty).
    arch_evidence: Optional[str] = None
    binary_error: Optional[str] = None  # libtorch_cuda*.so is there but could not be read
    extensions: tuple[TorchExtensionFacts, ...] = ()  # packages beside it that require torch and carry GPU code


@record
class HostFacts:
    """Everything the probes learned about one host."""

    driver: DriverFacts = field(default_factory=DriverFacts)
    gpus: tuple[GpuFacts, ...] = ()
    system: Optional[SystemFacts] = None
    docker: Optional[DockerFacts] = None
    torch: Optional[TorchFacts] = None
    hostname: Optional[str] = None
    probed_at: Optional[str] = None  # ISO 8601, UTC
    cudadoctor_version: Optional[str] = None

    @property
    def nvml_ok(self) -> bool:
        return self.driver.nvml_state == NVML_OK
