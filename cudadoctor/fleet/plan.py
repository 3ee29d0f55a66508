"""The fleet's upgrade plan for one release: the driver each failing group needs to run it (the
recommender's smallest driver upgrade for the release, over the builds that carry code for the
group's GPUs: a K80 gets none past the CUDA 11 builds, a V100 none of the CUDA 13 ones), grouped
into steps by the driver they need and ordered by the hosts each step brings in; the groups no
driver upgrade brings in are named with why."""

from __future__ import annotations

from typing import Optional

from ..compat.table import CompatTable, PytorchRelease
from ..doctor.check import check
from ..host.view import HostView
from ..model.findings import FAIL, Action
from ..model.record import record
from ..model.versions import DriverVersion
from .judge import FleetResult, HostGroup
from .matrix import OTHER, release_request, unable

GPU_NOT_BUILT = "gpu-not-built"  # no build of the release carries code for the group's GPUs
# The builds that carry code for the group's GPUs need a driver past the last branch those GPUs run (a K80 stops at R470).
GPU_PAST_LAST_BRANCH = "gpu-past-last-branch"


@record
class PlanGroup:
    names: tuple[str, ...]
    describe: str  # the group's driver and GPUs, in words


@record
class PlanStep:
    """One driver upgrade and the groups it brings in."""

    branch: str  # "R580"
    min_driver: str
    full_driver: Optional[str]  # the driver that supports the build's CUDA fully (None: not known, or past the GPUs' last branch)
    support: str  # "full", or "minor-compat": the build runs at min_driver only through CUDA minor-version compatibility
    variant: str
    cuda: str
    image: Optional[str]
    groups: tuple[PlanGroup, ...]
    hosts: int  # hosts this step brings in
    running: int  # hosts that run the release once this step (and the ones before it) is done


@record
class NeverRuns:
    """Groups no driver upgrade lets run the release, and why."""

    group: PlanGroup
    reason: str  # gpu-not-built | gpu-past-last-branch | no-driver | broken-driver | no-gpu | other
    findings: tuple[str, ...]
    detail: str


@record
class UpgradePlan:
    torch: str
    judged: int  # hosts judged
    running: int  # hosts that run the release as they are
    steps: tuple[PlanStep, ...]
    never: tuple[NeverRuns, ...]

    @property
    def reachable(self) -> int:
        return self.steps[-1].running if self.steps else self.running


def describe(group: HostGroup) -> str:
    """A group in a few words: its driver and GPUs."""
    if group.facts is None:
        return "no NVIDIA GPU labels"
    gpus = ", ".join(f"{k.count}x {k.name or 'GPU'}" for k in group.gpu_kinds) or "no GPU"
    return f"driver {group.driver or 'unknown'}; {gpus}"


def _plan_group(group: HostGroup) -> PlanGroup:
    return PlanGroup(group.names, describe(group))


def _never(group: HostGroup, view: HostView, release: PytorchRelease, codes: tuple[str, ...]) -> NeverRuns:
    from ..recommend import build_fix, past_last_branch

    reason = unable(group, view)
    if reason is not None:
        return NeverRuns(_plan_group(group), reason, codes, group.fix or ", ".join(codes))
    past = past_last_branch(view, release)
    if past is not None:
        return NeverRuns(_plan_group(group), GPU_PAST_LAST_BRANCH, codes, past)
    names = [v.name for v in release.variants]
    name = release.default_variant if release.default_variant in names else (names[-1] if names else "")
    detail = (f"none of PyTorch {release.version}'s builds ({', '.join(names)}) runs on these GPUs; {build_fix(view, release, name)[0]}"
              if name else f"PyTorch {release.version} has no CUDA build in the table")
    return NeverRuns(_plan_group(group), GPU_NOT_BUILT, codes, detail)


def upgrade_plan(fleet: FleetResult, table: CompatTable, release: Optional[PytorchRelease] = None) -> UpgradePlan:
    """What each group that fails ``release`` (the one asked for with --torch, else the newest the
    table knows) needs to run it, as steps ordered by the hosts each brings in."""
    from ..recommend import fit_tier, release_upgrade

    request = fleet.request
    target = release or (request.release if request.release_explicit else table.default_release)
    pinned = release_request(request, target)
    judged = running = 0
    by_driver: dict[tuple[str, Optional[str]], tuple[Action, list[HostGroup]]] = {}  # (driver floor, build)
    never: list[NeverRuns] = []
    for group in fleet.groups:
        if group.facts is None:
            continue
        judged += len(group.hosts)
        result = check(group.facts, table, pinned)
        if result.verdict != FAIL:
            running += len(group.hosts)
            continue
        codes = tuple(dict.fromkeys(f.code for f in result.findings if f.severity == FAIL))
        view = HostView.of(group.facts, table)
        upgrade = None if group.broken else release_upgrade(view, target, request.family.wheel_family)
        if upgrade is not None and upgrade.min_driver is not None:
            by_driver.setdefault((upgrade.min_driver, upgrade.variant), (upgrade, []))[1].append(group)
            continue
        entry = _never(group, view, target, codes)
        if entry.reason == GPU_NOT_BUILT and any(fit_tier(view, target, v.name) is not None for v in target.variants):
            # A build fits the driver and GPUs, and something else fails: no driver upgrade is the answer.
            entry = NeverRuns(entry.group, OTHER, codes, group.fix or ", ".join(codes))
        never.append(entry)
    ranked = sorted(by_driver.items(), key=lambda item: (-sum(len(g.hosts) for g in item[1][1]), DriverVersion.parse(item[0][0])))
    steps = []
    total = running
    for (floor, _), (action, groups) in ranked:
        gained = sum(len(g.hosts) for g in groups)
        total += gained
        steps.append(PlanStep(
            branch=f"R{DriverVersion.parse(floor).branch}", min_driver=floor, full_driver=action.full_driver, support=action.support or "full",
            variant=action.variant or "",
            cuda=action.cuda or "", image=action.image, groups=tuple(_plan_group(g) for g in groups), hosts=gained, running=total,
        ))
    return UpgradePlan(target.version, judged, running, tuple(steps), tuple(never))
