"""`check --docker / --image / --require / --smoke`: probe Docker (I/O), then the same pure rules.

The image's PyTorch release and CUDA variant become a Target, so it goes through the very driver
and architecture rules `check --torch` uses; its requirements through cudadoctor.requirements.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from .doctor import CheckResult, run_check
from .facts import HostFacts
from .imageref import ImageRef
from .table import CompatTable, ImageFamily, PytorchRelease


def run_container_check(
    facts: HostFacts,
    table: CompatTable,
    release: PytorchRelease,
    family: ImageFamily,
    ref: Optional[ImageRef],
    pull: bool,
    requires: tuple[str, ...],
    smoke: bool,
    docker: bool,
    timeout: float,
    release_given: bool = False,
    variant: Optional[str] = None,
    min_memory_bytes: Optional[int] = None,
) -> CheckResult:
    client = None
    if ref is not None or smoke or docker:
        from .probe.docker import close_quietly, connect

        client, docker_facts = connect(timeout)
        facts = dataclasses.replace(facts, docker=docker_facts)
    try:
        if ref is None:
            result = run_check(facts, table, release, family, variant, min_memory_bytes=min_memory_bytes)
            if not requires:
                return result
            target = dataclasses.replace(result.target, requirements=tuple(requires)) if result.target else None
            return run_check(facts, table, release, family, target=target, min_memory_bytes=min_memory_bytes)
        target = _image_target(client, facts, table, ref, pull, requires, smoke, timeout)
        image_release = table.release(target.torch) if target.torch else None
        if image_release is not None and not release_given:
            release = image_release
        return run_check(facts, table, release, family, target=target, min_memory_bytes=min_memory_bytes)
    finally:
        if client is not None:
            close_quietly(client)


def _image_target(client, facts, table, ref, pull, requires, smoke, timeout):
    from .facts import ImageFacts
    from .imagetarget import derive_target

    reference = str(ref)
    if client is None:
        image = ImageFacts(reference, state="error", error="the Docker daemon is not reachable (see the docker finding)")
    else:
        from .probe.image import inspect_image

        image = inspect_image(client, reference, pull, timeout)
    if smoke and client is not None and image.state == "ok":
        from .smoke import run_smoke

        image = dataclasses.replace(image, smoke=run_smoke(client, reference))
    return derive_target(table, ref, image, tuple(requires))
