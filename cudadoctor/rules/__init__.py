"""Rules: pure functions ``(facts, table, target) -> list[Finding]``, one module per subject.

``evaluate`` runs them in report order. A rule never raises on odd facts: unknown values
produce no verdict (or an info finding), never a crash.
"""

from __future__ import annotations

from typing import Callable, Iterable, Optional

from ..facts import HostFacts
from ..findings import Finding
from ..table import CompatTable
from ..target import Target
from . import container, driver, environment, gpu, health, nvml, system, torch

Rule = Callable[[HostFacts, CompatTable, Optional[Target]], Iterable[Finding]]

# Report order: can NVML talk to a driver, which GPUs, does the driver fit the target, do the GPUs.
RULES: tuple[Rule, ...] = (
    nvml.check_nvml,
    gpu.check_gpus_present,
    driver.check_driver_for_target,
    gpu.check_arch_for_target,
    # OS, environment, health and installed-torch checks (issue 5).
    system.check_driver_presence,
    system.check_kernel_module,
    system.check_device_nodes,
    system.check_libcuda,
    environment.check_container,
    environment.check_wsl,
    environment.check_visible_devices,
    health.check_health,
    health.check_mig,
    system.check_forward_compat,
    health.check_memory,
    health.check_capabilities,
    torch.check_torch,
    # Docker, image and requirement checks (issue 4); they judge only what was probed.
    container.check_docker,
    container.check_image,
    container.check_requirements,
    container.check_smoke,
)


def evaluate(facts: HostFacts, table: CompatTable, target: Optional[Target], rules: Iterable[Rule] = RULES) -> list[Finding]:
    findings: list[Finding] = []
    for rule in rules:
        findings.extend(rule(facts, table, target))
    return findings
