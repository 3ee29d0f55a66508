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
from . import driver, environment, gpu, health, nvml, system, torch

Rule = Callable[[HostFacts, CompatTable, Optional[Target]], Iterable[Finding]]


def _container_rule(name: str) -> Rule:
    """A container rule, imported only when something container-related was probed or asked for:
    its requirement parser is not needed by a plain `check`, and start-up time is a feature."""

    def rule(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> Iterable[Finding]:
        if facts.docker is None and (target is None or (target.image_facts is None and not target.requirements)):
            return []
        from . import container

        return getattr(container, name)(facts, table, target)

    rule.__name__ = rule.__qualname__ = name
    return rule

# Report order: can NVML talk to a driver, which GPUs, does the driver fit the target, do the GPUs.
RULES: tuple[Rule, ...] = (
    nvml.check_nvml,
    gpu.check_gpus_present,
    driver.check_driver_for_target,
    driver.check_driver_knows_gpus,
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
    _container_rule("check_docker"),
    _container_rule("check_image"),
    _container_rule("check_requirements"),
    _container_rule("check_smoke"),
)


def evaluate(facts: HostFacts, table: CompatTable, target: Optional[Target], rules: Iterable[Rule] = RULES) -> list[Finding]:
    findings: list[Finding] = []
    for rule in rules:
        findings.extend(rule(facts, table, target))
    return findings
