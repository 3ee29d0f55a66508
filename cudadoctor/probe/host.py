"""Run the probes that a command needs and assemble HostFacts."""

from __future__ import annotations

import os
import time

from ..about import __version__
from ..model.facts import NVML_NOT_PROBED, DriverFacts, GpuFacts, HostFacts
from .libcuda import DEFAULT_LIBCUDA_TIMEOUT_S, probe_libcuda_watched
from .system import probe_system
from .torch_probe import probe_torch_metadata, probe_torch_runtime

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from .nvml import NvmlProbe


def probe_host(
    torch_runtime: bool = False,
    nvml_timeout: Optional[float] = None,
    nvml: Optional["NvmlProbe"] = None,
    with_nvml: bool = True,
) -> HostFacts:
    """NVML (in a watched child, bounded by ``nvml_timeout``; None: probe.nvml's default), the OS
    and torch's metadata always (cheap); torch's runtime only with ``torch_runtime``. ``nvml`` is a probe the caller started
    earlier (NvmlWatch.start), so that NVML initialises while the caller loads the table.
    ``with_nvml=False``: NVML is not asked at all (no child, no nvidia-ml-py), because the caller
    replaces every fact it gives (the what-if --driver and --gpu together); the driver is then
    "not probed" and there are no GPUs."""
    driver: DriverFacts = DriverFacts(nvml_state=NVML_NOT_PROBED)
    gpus: tuple[GpuFacts, ...] = ()
    if not with_nvml and nvml is not None:  # started, then found not needed: stopped, not left running
        nvml.cancel()
        nvml = None
    if with_nvml and nvml is None:
        from .nvml import DEFAULT_NVML_TIMEOUT_S, NvmlWatch

        # NVML initialises in its child while the rest is read here; libcuda is asked first there.
        nvml = NvmlWatch.start(DEFAULT_NVML_TIMEOUT_S if nvml_timeout is None else nvml_timeout, libcuda=True)
    # libcuda under the same watchdog as NVML (a cuDriverGetVersion that hangs or crashes is
    # reported): in NVML's child when it was started with it, else in a child of its own
    libcuda = nvml.libcuda() if with_nvml and nvml is not None else None
    if libcuda is None:
        libcuda = probe_libcuda_watched(nvml_timeout if nvml_timeout is not None else DEFAULT_LIBCUDA_TIMEOUT_S)
    system = probe_system(libcuda=libcuda)
    torch = probe_torch_metadata()
    if with_nvml and nvml is not None:
        driver, gpus = nvml.result()
    if torch_runtime:
        torch = probe_torch_runtime(torch)
    hostname = os.uname().nodename or None  # as socket.gethostname(), without importing socket
    return HostFacts(
        driver=driver,
        gpus=gpus,
        system=system,
        torch=torch,
        hostname=hostname,
        probed_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        cudadoctor_version=__version__,
    )
