"""Run the probes that a command needs and assemble HostFacts."""

from __future__ import annotations

import os
import time
from typing import Optional

from ..about import __version__
from ..model.facts import HostFacts
from .libcuda import probe_libcuda_watched
from .nvml import DEFAULT_NVML_TIMEOUT_S, NvmlProbe, NvmlWatch
from .system import probe_system
from .torch_probe import probe_torch_metadata, probe_torch_runtime


def probe_host(
    torch_runtime: bool = False, nvml_timeout: float = DEFAULT_NVML_TIMEOUT_S, nvml: Optional[NvmlProbe] = None
) -> HostFacts:
    """NVML (in a watched child, bounded by ``nvml_timeout``), the OS and torch's metadata always
    (cheap); torch's runtime only with ``torch_runtime``. ``nvml`` is a probe the caller started
    earlier (NvmlWatch.start), so that NVML initialises while the caller loads the table."""
    if nvml is None:
        nvml = NvmlWatch.start(nvml_timeout)  # NVML initialises in its child while the rest is read here
    system = probe_system(libcuda=probe_libcuda_watched(nvml_timeout))  # under the same watchdog as NVML
    torch = probe_torch_metadata()
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
