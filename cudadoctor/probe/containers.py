"""The container probes a command asks for: the Docker Engine (``--docker``, ``--image``,
``--smoke``), the image (inspected, pulled only with ``--pull``) and the smoke run. I/O only;
the judging is the pure checks' (rules/docker.py, rules/image.py)."""

from __future__ import annotations

import time
from typing import Callable, Optional

from ..model.facts import DockerFacts, ImageFacts
from ..model.imageref import ImageRef
from ..model.record import replace


def probe_containers(
    ref: Optional[ImageRef],
    pull: bool,
    smoke: bool,
    docker: bool,
    timeout: float,
    pull_timeout: Optional[float] = None,
    smoke_timeout: Optional[float] = None,
    progress: Optional[Callable[[str], None]] = None,
) -> tuple[Optional[DockerFacts], Optional[ImageFacts]]:
    """(what the daemon said about itself, what it said about the image); None where not asked.

    Talking to the daemon (connecting, version, info, inspecting the image) is bounded by
    ``timeout`` seconds altogether; a pull by ``pull_timeout`` and a smoke run by ``smoke_timeout``,
    each on top. ``progress`` (a terminal's status line, or None) hears how a pull or a smoke run goes."""
    if ref is None and not smoke and not docker:
        return None, None
    from .docker import close_quietly, connect

    deadline = time.monotonic() + timeout
    client, docker_facts = connect(timeout)
    try:
        if ref is None:
            return docker_facts, None
        reference = str(ref)
        if client is None:
            return docker_facts, ImageFacts(reference, state="error", error="the Docker daemon is not reachable (see the docker finding)")
        from .image import PULL_TIMEOUT_S, inspect_image

        remaining = max(deadline - time.monotonic(), 0.05)
        image = inspect_image(client, reference, pull, remaining, pull_timeout or PULL_TIMEOUT_S, progress)
        if image.state == "ok":
            from .hygiene import read_hygiene

            remaining = max(deadline - time.monotonic(), 0.05)
            image = replace(image, hygiene=read_hygiene(client, reference, remaining))
            from .image_binaries import torch_arch_in_image

            remaining = max(deadline - time.monotonic(), 0.05)
            arch, why = torch_arch_in_image(client, reference, remaining)
            image = replace(image, torch_arch_list=arch, torch_binary_error=why)
        if smoke and image.state == "ok":
            from .smoke import SMOKE_TIMEOUT_S, run_smoke

            image = replace(image, smoke=run_smoke(client, reference, smoke_timeout or SMOKE_TIMEOUT_S, progress))
        return docker_facts, image
    finally:
        if client is not None:
            close_quietly(client)
