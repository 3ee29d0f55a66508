"""What-if flags: --driver VERSION and --gpu SPEC replace what NVML would have said."""

from __future__ import annotations

from typing import Optional, Sequence

from ..model.facts import NVML_OK, DriverFacts, GpuFacts, HostFacts
from ..compat.table import CompatTable, GpuModel
from ..model.record import replace
from ..model.versions import ComputeCapability, DriverVersion, VersionError
from ..model.text import quoted


class WhatIfError(ValueError):
    """A --driver or --gpu value we cannot use; the message names it and what is accepted."""


def parse_driver(text: str, table: CompatTable) -> DriverFacts:
    try:
        driver = DriverVersion.parse(text)
    except VersionError as exc:
        raise WhatIfError(f"--driver: {exc}") from None
    cuda = table.cuda_supported_by_driver(driver)
    return DriverFacts(
        nvml_state=NVML_OK,
        driver_version=driver.raw,
        cuda_driver_version=str(cuda) if cuda else None,
        source="what-if",
    )


def resolve_gpu_spec(spec: str, table: CompatTable) -> tuple[Optional[GpuModel], ComputeCapability]:
    """A product the table knows (its model and compute capability), or a bare compute capability."""
    text = spec.strip()
    if not text or len(text) > 100:
        raise WhatIfError(f"{quoted(spec[:40])} is not a GPU: give a compute capability such as 8.6 or a product name such as A100")
    model = table.gpu_model(text)
    if model is not None:
        return model, model.cc
    try:
        cc = ComputeCapability.parse(text)
    except VersionError:
        raise WhatIfError(
            f"unknown GPU {quoted(text)}: give a compute capability such as 8.6, or a product the table "
            "knows such as A100, H100 or RTX 4090 (list them with `cudadoctor table --gpus`)"
        ) from None
    if table.cc_info(cc) is None:
        known = ", ".join(str(c.cc) for c in table.compute_capabilities)
        raise WhatIfError(f"compute capability {cc} is not one the table knows ({known})")
    return None, cc


def parse_gpu(spec: str, index: int, table: CompatTable) -> GpuFacts:
    try:
        model, cc = resolve_gpu_spec(spec, table)
    except WhatIfError as exc:
        raise WhatIfError(f"--gpu: {exc}") from None
    name = model.name if model is not None else f"compute capability {cc}"
    return GpuFacts(index=index, name=name, compute_capability=str(cc), source="what-if")


def check_what_if(driver: Optional[str], gpus: Sequence[str], table: CompatTable) -> None:
    """Refuse bad --driver/--gpu values (WhatIfError) before anything is probed or read, so a
    typo is reported first."""
    if driver:
        parse_driver(driver, table)
    for i, spec in enumerate(gpus):
        parse_gpu(spec, i, table)


def apply_what_if(
    facts: HostFacts, table: CompatTable, driver: Optional[str], gpus: Sequence[str]
) -> HostFacts:
    """Replace the driver and/or GPU facts with the ones the user gave."""
    changes: dict[str, object] = {}
    if driver:
        changes["driver"] = parse_driver(driver, table)
    if gpus:
        changes["gpus"] = tuple(parse_gpu(spec, i, table) for i, spec in enumerate(gpus))
    elif driver and facts.driver.source != "what-if" and not facts.nvml_ok:
        changes["gpus"] = ()
    return replace(facts, **changes) if changes else facts
