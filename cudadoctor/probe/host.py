"""Run the probes that a command needs and assemble HostFacts."""

from __future__ import annotations

import datetime
import socket

from .. import __version__
from ..facts import HostFacts
from .libcuda import probe_libcuda
from .nvml import probe_nvml
from .system import probe_system
from .torch_probe import probe_torch_metadata, probe_torch_runtime


def probe_host(torch_runtime: bool = False) -> HostFacts:
    """NVML, the OS and torch's metadata always (cheap); torch's runtime only with ``torch_runtime``."""
    driver, gpus = probe_nvml()
    system = probe_system(libcuda=probe_libcuda())
    torch = probe_torch_metadata()
    if torch_runtime:
        torch = probe_torch_runtime(torch)
    try:
        hostname = socket.gethostname()
    except OSError:
        hostname = None
    return HostFacts(
        driver=driver,
        gpus=gpus,
        system=system,
        torch=torch,
        hostname=hostname,
        probed_at=datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        cudadoctor_version=__version__,
    )
