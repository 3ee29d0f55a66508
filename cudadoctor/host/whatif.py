"""What-if flags: --driver VERSION and --gpu SPEC replace what NVML would have said;
--forward-compat X.Y says a CUDA forward-compatibility libcuda (cuda-compat-X-Y) is in effect."""

from __future__ import annotations

from ..model.facts import NVML_OK, CudaCompatFacts, DriverFacts, GpuFacts, HostFacts, SystemFacts
from ..compat.table import CompatTable, GpuModel
from ..model.record import replace
from ..model.versions import ComputeCapability, CudaVersion, DriverVersion, VersionError
from ..model.text import quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence


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


def parse_forward_compat(text: str, table: CompatTable) -> CudaCompatFacts:
    """--forward-compat 12.4: the cuda-compat-12-4 package's libcuda is in effect (planning)."""
    try:
        cuda = CudaVersion.parse(text.strip())
    except VersionError as exc:
        raise WhatIfError(f"--forward-compat: {exc}; give the CUDA the cuda-compat package provides, such as 12.4") from None
    if table.toolkit_architectures_for(cuda) is None and table.min_driver_full(cuda) is None:
        raise WhatIfError(f"--forward-compat: CUDA {cuda.major_minor} is not a CUDA release the table knows")
    minor = cuda.major_minor
    return CudaCompatFacts(
        directory=f"/usr/local/cuda-{minor}/compat", cuda=str(minor), in_effect=True, how="what-if", source="what-if",
    )


def check_what_if(driver: Optional[str], gpus: Sequence[str], table: CompatTable, forward_compat: Optional[str] = None) -> None:
    """Refuse bad --driver/--gpu/--forward-compat values (WhatIfError) before anything is probed or
    read, so a typo is reported first."""
    if driver:
        parse_driver(driver, table)
    if forward_compat:
        parse_forward_compat(forward_compat, table)
    for i, spec in enumerate(gpus):
        parse_gpu(spec, i, table)


def apply_what_if(
    facts: HostFacts, table: CompatTable, driver: Optional[str], gpus: Sequence[str], forward_compat: Optional[str] = None
) -> HostFacts:
    """Replace the driver and/or GPU facts with the ones the user gave; with ``forward_compat``,
    a cuda-compat libcuda of that CUDA is in effect (and no other)."""
    changes: dict[str, object] = {}
    if forward_compat:
        system = facts.system or SystemFacts()
        kept = tuple(replace(e, in_effect=False, how=None) for e in system.cuda_compat if e.source != "what-if")
        changes["system"] = replace(system, cuda_compat=kept + (parse_forward_compat(forward_compat, table),))
    if driver:
        changes["driver"] = parse_driver(driver, table)
    if gpus:
        changes["gpus"] = tuple(parse_gpu(spec, i, table) for i, spec in enumerate(gpus))
    elif driver and facts.driver.source != "what-if" and not facts.nvml_ok:
        changes["gpus"] = ()
    return replace(facts, **changes) if changes else facts
