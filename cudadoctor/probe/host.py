"""Run the probes that a command needs and assemble HostFacts."""

from __future__ import annotations

import datetime
import socket

from .. import __version__
from ..facts import HostFacts
from .nvml import probe_nvml


def probe_host() -> HostFacts:
    driver, gpus = probe_nvml()
    try:
        hostname = socket.gethostname()
    except OSError:
        hostname = None
    return HostFacts(
        driver=driver,
        gpus=gpus,
        hostname=hostname,
        probed_at=datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        cudadoctor_version=__version__,
    )
