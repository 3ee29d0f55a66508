"""Does the driver support the CUDA version the target was built with?"""

from __future__ import annotations

from typing import Optional

from ..facts import HostFacts
from ..findings import FAIL, OK, WARN, Finding
from ..hostview import driver_support, driver_version, gpu_cc, gpu_label, gpus_in_scope
from ..table import CompatTable
from ..target import Target
from ..versions import CudaVersion


def check_driver_for_target(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    if target is None or not target.cuda or not facts.nvml_ok:  # an image may not say its CUDA
        return []
    cuda = CudaVersion.parse(target.cuda)
    support = driver_support(facts, table, cuda)
    full_row = table.min_driver_full(cuda)
    compat_row = table.minor_compat_floor(cuda.major)
    source_keys = [row.source for row in (full_row, compat_row) if row is not None]
    source = "; ".join(dict.fromkeys(table.cite(k) for k in source_keys))
    what = f"{target.variant} (CUDA {cuda.major_minor})"
    driver = support.driver or "unknown"
    if support.tier == "unknown":
        return []
    if support.tier == "full":
        supported = f", which supports CUDA {support.driver_cuda}" if support.driver_cuda else ""
        return [
            Finding(
                "driver-ok",
                OK,
                f"Driver {driver} supports {what}",
                f"Driver {driver}{supported}; CUDA {cuda.major_minor} needs >= {support.full_min}.",
                "",
                source,
                "driver",
            )
        ]
    if support.tier == "minor-compat":
        return [
            Finding(
                "driver-minor-compat",
                WARN,
                f"{what} runs only through CUDA minor-version compatibility",
                f"Driver {driver} supports CUDA {support.driver_cuda or 'an older release'}, older than "
                f"{cuda.major_minor}, but it is at least {support.compat_min}, the floor for every CUDA "
                f"{cuda.major}.x toolkit. That mode gives things up: PTX newer than the driver cannot be "
                "JIT-compiled (a build that only ships PTX for a GPU fails there), and APIs added after the "
                "driver's CUDA return cudaErrorCallRequiresNewerDriver.",
                f"Upgrade the driver to >= {support.full_min} for full CUDA {cuda.major_minor} support, or "
                "choose a variant this driver supports fully (`cudadoctor recommend`).",
                source,
                "driver",
            )
        ]
    floor = support.compat_min or support.full_min
    compat_clause = ""
    if support.compat_min and support.compat_min != support.full_min:
        compat_clause = f", or >= {support.compat_min} under minor-version compatibility"
    upgrade = f"Upgrade the NVIDIA driver to >= {floor}"
    if support.full_min and support.full_min != floor:
        upgrade += f" (>= {support.full_min} for full CUDA {cuda.major_minor} support)"
    return [
        Finding(
            "driver-too-old",
            FAIL,
            f"Driver {driver} is too old for {what}",
            f"Driver {driver} supports CUDA {support.driver_cuda or 'older releases only'}; CUDA "
            f"{cuda.major_minor} needs >= {support.full_min}{compat_clause}. CUDA programs fail with "
            "\"CUDA driver version is insufficient for CUDA runtime version\" (torch: \"The NVIDIA driver "
            "on your system is too old\").",
            upgrade + ", or pick a variant built for an older CUDA (`cudadoctor recommend`).",
            source,
            "driver",
        )
    ]


def check_driver_knows_gpus(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    """A planned driver older than the first CUDA release that targets a planned GPU's architecture.

    On a real host NVML enumerating a GPU proves the driver drives it; this matters for what-if
    plans (--driver / --gpu), where nothing else would notice an H100 paired with an R450 driver.
    """
    planned = facts.driver.source == "what-if" or any(gpu.source == "what-if" for gpu in facts.gpus)
    driver = driver_version(facts)
    if not planned or driver is None or not facts.nvml_ok:
        return []
    findings = []
    for gpu in gpus_in_scope(facts):
        cc = gpu_cc(gpu, table)
        first = table.first_toolkit_for(cc) if cc is not None else None
        row = table.min_driver_full(first.cuda) if first is not None else None
        if row is None or driver >= row.min_driver_linux:
            continue
        findings.append(
            Finding(
                "driver-predates-gpu",
                WARN,
                f"Driver {driver} predates {gpu_label(gpu)} ({cc.sm})",
                f"CUDA {first.cuda.major_minor} is the first release that can build for {cc.sm}, and it shipped "
                f"with driver {row.min_driver_linux}; driver {driver} is older. Drivers older than an "
                "architecture generally do not drive it: nvidia-smi would not list the GPU.",
                f"Plan for driver >= {row.min_driver_linux} (or the driver NVIDIA's release notes name for this "
                "GPU).",
                "; ".join(dict.fromkeys((table.cite(first.source), table.cite(row.source)))),
                "driver",
                gpu.index,
            )
        )
    return findings
