"""Put the pure pieces together: choose the target, run the rules, recommend. No I/O."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from .facts import HostFacts
from .findings import Finding, exit_status, verdict
from .recommend import Recommendation, recommend
from .rules import evaluate
from .table import CompatTable, ImageFamily, PytorchRelease
from .target import Target


@dataclass(frozen=True)
class CheckResult:
    facts: HostFacts
    target: Optional[Target]
    recommendation: Recommendation
    findings: tuple[Finding, ...]

    @property
    def verdict(self) -> str:
        return verdict(self.findings)

    def exit_status(self, strict: bool = False) -> int:
        return exit_status(self.findings, strict)


def choose_target(
    table: CompatTable,
    release: PytorchRelease,
    family: ImageFamily,
    recommendation: Recommendation,
    variant: Optional[str] = None,
) -> Target:
    """The pinned variant, else the recommendation, else what a plain `pip install torch` gives."""
    if variant:
        chosen, origin = release.variant(variant), "--variant"
    elif recommendation.found:
        chosen, origin = release.variant(recommendation.variant or ""), "recommendation"
    else:
        chosen = release.variant(release.default_variant or "") or release.variants[-1]
        origin = "default-wheel"
    assert chosen is not None  # the CLI validated --variant against the release
    offered = chosen.name in family.variants_for(release)
    return Target(
        torch=release.version,
        variant=chosen.name,
        cuda=str(chosen.cuda.major_minor),
        image=family.reference(release, chosen) if offered else None,
        family=family.name if offered else None,
        origin=origin,
    )


def run_check(
    facts: HostFacts,
    table: CompatTable,
    release: PytorchRelease,
    family: ImageFamily,
    variant: Optional[str] = None,
    target: Optional[Target] = None,
    min_memory_bytes: Optional[int] = None,
) -> CheckResult:
    recommendation = recommend(facts, table, release, family)
    target = target or choose_target(table, release, family, recommendation, variant)
    if min_memory_bytes is not None:
        target = dataclasses.replace(target, min_memory_bytes=min_memory_bytes)
    return CheckResult(facts, target, recommendation, tuple(evaluate(facts, table, target)))
