"""The fleet's coverage matrix: every release the table knows, from the oldest that runs on any
node to the newest, judged on every group of hosts by the pure check, as `fleet --torch X.Y`
judges them (the policy is the check's and the recommender's; nothing here re-decides it).

Hosts that run no release are named apart, with why: no driver, a driver NVML cannot read, no
GPU, GPUs no build carries code for, or a driver too old for every build that covers its GPUs."""

from __future__ import annotations

from typing import Optional, Sequence

from ..compat.table import CompatTable, PytorchRelease
from ..doctor.check import CheckResult, check
from ..doctor.request import Request
from ..host.view import HostView
from ..model.facts import NVML_DRIVER_NOT_LOADED, NVML_LIBRARY_MISSING, NVML_NOT_PROBED, NVML_OK
from ..model.findings import FAIL
from ..model.record import record, replace
from ..model.versions import DriverVersion
from .judge import FleetResult, HostGroup

# Why a group runs no release (the JSON's ``runs_none[].reason``).
NO_DRIVER = "no-driver"
BROKEN_DRIVER = "broken-driver"
NO_GPU = "no-gpu"
GPU_TOO_OLD = "gpu-too-old"
DRIVER_TOO_OLD = "driver-too-old"
OTHER = "other"
RUNS_NONE_REASONS = (NO_DRIVER, BROKEN_DRIVER, NO_GPU, GPU_TOO_OLD, DRIVER_TOO_OLD, OTHER)


@record
class Cell:
    """One group judged for one release: the check's verdict and the build it would use."""

    verdict: str
    variant: Optional[str]
    cuda: Optional[str]
    support: Optional[str]
    image: Optional[str]

    @property
    def runs(self) -> bool:
        return self.verdict != FAIL


@record
class MatrixRow:
    """One release on every judged group (``cells`` in the matrix's group order), counted in hosts."""

    torch: str
    ok: int
    warn: int
    fail: int
    cells: tuple[Cell, ...]

    @property
    def runs(self) -> int:
        return self.ok + self.warn


@record
class RunsNone:
    """A group of hosts that runs no release the table knows, and why."""

    group: int  # its index in the matrix's groups
    reason: str  # one of RUNS_NONE_REASONS
    findings: tuple[str, ...]
    detail: str


@record
class Matrix:
    groups: tuple[HostGroup, ...]  # the judged groups (a source without GPU facts is not judged)
    rows: tuple[MatrixRow, ...]  # newest release first
    runs_none: tuple[RunsNone, ...]
    able: int  # hosts that run at least one release
    unjudged: int  # hosts whose sources carry no GPU facts
    every: Optional[str]  # the newest release every able host runs (None: no release does)
    most: Optional[str]  # the newest release that runs on the most hosts (None: none runs anywhere)

    def row(self, torch: str) -> Optional[MatrixRow]:
        return next((r for r in self.rows if r.torch == torch), None)

    def span(self, group: int) -> Optional[tuple[str, str]]:
        """(the oldest, the newest) release the group runs; None: it runs none."""
        runs = [row.torch for row in self.rows if row.cells[group].runs]
        return (runs[-1], runs[0]) if runs else None

    def left_out(self, torch: str) -> tuple[int, ...]:
        """The groups able to run some release that do not run this one."""
        row = self.row(torch)
        if row is None:
            return ()
        return tuple(i for i, cell in enumerate(row.cells) if not cell.runs and self.span(i) is not None)

    @property
    def most_hosts(self) -> int:
        row = self.row(self.most) if self.most is not None else None
        return row.runs if row is not None else 0


def release_request(request: Request, release: PytorchRelease) -> Request:
    """The request as `--torch X.Y` with the same family and options: one release judged strictly."""
    return replace(request, release=release, release_explicit=True, newer_release=None)


def _cell(result: CheckResult) -> Cell:
    rec = result.recommendation
    if rec is None or not rec.found:
        return Cell(result.verdict, None, None, None, None)
    return Cell(result.verdict, rec.variant, rec.cuda, rec.support, rec.image)


NO_BUILD = Cell(FAIL, None, None, None, None)


def _row(
    release: PytorchRelease, groups: Sequence[HostGroup], views: Sequence[HostView], table: CompatTable, request: Request
) -> MatrixRow:
    from ..recommend import fit_tier

    pinned = release_request(request, release)
    cells = []
    counts = {"ok": 0, "warn": 0, FAIL: 0}
    for group, view in zip(groups, views):
        assert group.facts is not None
        # The check fails where no build can run (the fleet's own test, judge._build_coverage): a
        # failure no build avoids, or no wheel of the release that fits the driver and GPUs. Only
        # the rest need the check, which says ok or warn and names the build.
        if group.broken or all(fit_tier(view, release, v.name) is None for v in release.variants):
            cell = NO_BUILD
        else:
            cell = _cell(check(group.facts, table, pinned))
        counts[cell.verdict if cell.verdict in counts else FAIL] += len(group.hosts)
        cells.append(cell)
    return MatrixRow(release.version, counts["ok"], counts["warn"], counts[FAIL], tuple(cells))


def unable(group: HostGroup, view: HostView) -> Optional[str]:
    """Why no build can run on the group whatever the release, when that is so: no driver, a
    driver NVML cannot read, no GPU in scope, or another failure no build avoids (HostGroup.broken);
    None when the builds decide it. The matrix and the plan both name groups by it."""
    from ..recommend import nothing_to_run_on, no_gpu_in_scope

    state = view.facts.driver.nvml_state
    if state in (NVML_LIBRARY_MISSING, NVML_DRIVER_NOT_LOADED):
        return NO_DRIVER
    if group.broken and state not in (NVML_OK, NVML_NOT_PROBED):
        return BROKEN_DRIVER  # a driver is there, and NVML cannot read it (a version mismatch, a hang ...)
    if nothing_to_run_on(view):
        return NO_DRIVER
    if no_gpu_in_scope(view):
        return NO_GPU
    return OTHER if group.broken else None


def _why_none(group: HostGroup, index: int, table: CompatTable, request: Request) -> RunsNone:
    """Why a group runs no release: what its own check found, in the matrix's terms."""
    from ..recommend import release_upgrade

    assert group.facts is not None and group.result is not None
    view = HostView.of(group.facts, table)
    codes = tuple(dict.fromkeys(f.code for f in group.result.findings if f.severity == FAIL))
    reason = unable(group, view)
    if reason is not None:
        return RunsNone(index, reason, codes, group.fix or ", ".join(codes))
    newest_first = sorted(table.pytorch_releases, key=lambda r: r.key, reverse=True)
    upgrades = [u for u in (release_upgrade(view, r, request.family.wheel_family) for r in newest_first) if u is not None and u.min_driver]
    if not upgrades:
        return RunsNone(index, GPU_TOO_OLD, codes, "no release the table knows has a build with code for these GPUs")
    smallest = min(upgrades, key=lambda a: DriverVersion.parse(a.min_driver or ""))  # the newest release among equal floors
    detail = f"upgrade the NVIDIA driver to >= {smallest.min_driver} to run PyTorch {smallest.torch} {smallest.variant}"
    return RunsNone(index, DRIVER_TOO_OLD, codes, detail)


def coverage_matrix(fleet: FleetResult, table: CompatTable, every_release: bool = False) -> Matrix:
    """Every release from the oldest that runs on some judged host (``every_release``: the oldest
    the table knows) to the newest, on every judged group."""
    request = fleet.request
    groups = tuple(g for g in fleet.groups if g.facts is not None and g.result is not None)
    unjudged = sum(len(g.hosts) for g in fleet.groups if g.facts is None or g.result is None)
    newest_first = sorted(table.pytorch_releases, key=lambda r: r.key, reverse=True)
    views = [HostView.of(g.facts, table) for g in groups if g.facts is not None]
    rows = [_row(release, groups, views, table, request) for release in newest_first]
    while rows and rows[-1].runs == 0 and not every_release:  # older than the oldest release any host runs
        rows.pop()
    if not rows:  # nothing runs anywhere: the newest release alone shows why
        rows = [_row(newest_first[0], groups, views, table, request)] if newest_first and groups else []
    runs_somewhere = [any(row.cells[i].runs for row in rows) for i in range(len(groups))]
    runs_none = tuple(_why_none(g, i, table, request) for i, g in enumerate(groups) if not runs_somewhere[i])
    able = sum(len(g.hosts) for g, ok in zip(groups, runs_somewhere) if ok)
    every = next((r.torch for r in rows if able and all(r.cells[i].runs for i in range(len(groups)) if runs_somewhere[i])), None)
    best = max((r.runs for r in rows), default=0)
    most = next((r.torch for r in rows if best and r.runs == best), None)
    return Matrix(groups, tuple(rows), runs_none, able, unjudged, every, most)
