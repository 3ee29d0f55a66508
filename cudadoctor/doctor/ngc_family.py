"""NVIDIA's NGC PyTorch containers as a Family (doctor/family.py): one image per monthly release,
each with its own CUDA and PyTorch build. Its recommender (the newest month this host runs, and
the smallest driver upgrade when none does), its target and its fleet candidates live here; how
a host runs a month is host/ngc.py's, and the check that judges an NGC target is rules/ngc.py's
(the rules sit below the recommender and the doctor, and rules/driver.py consults it)."""

from __future__ import annotations

import re

from ..compat.ngc import NgcFamily, NgcRelease
from ..compat.table import CompatTable, ImageFamily, PytorchRelease
from ..host.view import HostView
from ..model.findings import Action
from ..model.record import record, replace
from ..model.target import Target
from ..model.versions import DriverVersion
from ..recommend import Recommendation, Rejection
from .kinds import NGC
from .target import release_target, variant_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

    from ..fleet.judge import Coverage
    from .family import CandidateReach, Family
    from .request import Request


@record
class NgcImageFamily:
    """An NGC family: its builds are months, each one image; ``stand_in`` is the wheel family whose
    release target stands in when no month fits (so the checks still say what the host lacks)."""

    months: NgcFamily
    stand_in: ImageFamily

    kind = NGC
    offers_wheels = False
    uses_image_compat = False  # a month's cuda-compat is judged by rules/ngc.py
    newest_words = "the newest NGC month"

    @property
    def name(self) -> str:
        return self.months.name

    @property
    def wheel_family(self) -> ImageFamily:
        return self.stand_in

    def chooses_release(self, request: "Request") -> bool:
        return False  # the family names the build: its newest month that runs

    def judges_newest(self, request: "Request") -> bool:
        return request.image is None

    def unheld_release(self, table: CompatTable, release: PytorchRelease) -> Optional[str]:
        """A month holds one PyTorch build: a --torch no month holds is a question with no answer
        here, not a wheel of another family to judge instead."""
        held = sorted({r.torch_minor for r in table.ngc_releases if r.torch_minor}, key=lambda v: tuple(int(p) for p in v.split(".")))
        if release.version in held:
            return None
        return (
            f"no NGC PyTorch month in the table holds PyTorch {release.version} (the months record {', '.join(held) or 'none'}); "
            f"drop --torch, or pick a wheel family (--family {table.image_families[0].name})"
        )

    def for_image(self, table: CompatTable, target: Optional[Target]) -> Family:
        return self

    def recommend(self, host: HostView, request: "Request", images: bool = True) -> Recommendation:
        return recommend_ngc(host, self.months, ngc_torch(request), today=request.today)

    def target(self, table: CompatTable, request: "Request", recommendation: Recommendation) -> Target:
        return ngc_target(table, self.months, request, recommendation) or release_target(request, recommendation)

    def candidates(self, table: CompatTable, request: "Request", reach: CandidateReach) -> list["Coverage"]:
        """Each month whose CUDA the table records, checked as the target image on every group: the
        most hosts first; among equals, months whose CUDA NVIDIA's material settles, then the newest."""
        from ..model.imageref import parse_image_ref

        ranked: list[tuple["Coverage", bool, tuple[int, int]]] = []
        torch = ngc_torch(request)
        for release in table.ngc_releases:
            if release.cuda is None or (torch is not None and release.torch_minor != torch):
                continue
            image = self.months.reference(release)
            coverage = reach.image(replace(request, image=parse_image_ref(image)), image)
            coverage = replace(coverage, variant=release.release, cuda=str(release.cuda.major_minor))
            ranked.append((coverage, release.settled, release.key))
        ranked.sort(key=lambda r: (-r[0].hosts, not r[1], tuple(-n for n in r[2])))
        return [coverage for coverage, _, _ in ranked]


def ngc_torch(request: "Request") -> Optional[str]:
    """The PyTorch minor release --torch asked for, which limits the NGC months considered."""
    return request.release.version if request.release_explicit and request.newer_release is None else None


def ngc_target(table: CompatTable, family: NgcFamily, request: "Request", recommendation: Recommendation) -> Optional[Target]:
    """The recommended NGC release as the target, judged from the table (None when nothing fits:
    the wheel target then stands in, so the checks still say what the host lacks)."""
    entry = table.ngc_release(recommendation.variant or "") if recommendation.found else None
    if entry is None or entry.cuda is None:
        return None
    cuda = entry.cuda.major_minor
    return Target(
        torch=recommendation.torch if table.release(recommendation.torch) else "",
        variant=variant_name(cuda),
        cuda=str(cuda),
        image=family.reference(entry),
        family=family.name,
        origin="recommendation",
        requirements=request.requirements,
        min_memory_bytes=request.min_memory_bytes,
        arch_list=entry.arch_list,
    )


def recommend_ngc(host: HostView, family: NgcFamily, torch: Optional[str] = None, today: Optional[str] = None) -> Recommendation:
    """The newest NGC PyTorch release this host runs (natively, through forward compatibility on a
    data-center GPU, or under minor-version compatibility), and why each newer one lost. The
    chosen release is the recommendation's ``variant``; months whose CUDA the table does not
    record are passed over, and say so. With ``torch`` ("2.9"), only months whose recorded
    PyTorch build is of that minor release are considered."""
    from ..host.ngc import FORWARD_COMPAT, MINOR, NATIVE, ngc_fit

    rejected: list[Rejection] = []
    barred = False
    newest_first = tuple(reversed(host.table.ngc_releases))
    if torch is not None:
        kept = []
        for release in newest_first:
            if release.torch_minor is None:
                rejected.append(Rejection(release.release, f"the table does not record its PyTorch build, so it cannot be shown to be PyTorch {torch}"))
            elif release.torch_minor != torch:
                rejected.append(Rejection(release.release, f"it holds PyTorch {release.pytorch}, not {torch}"))
            else:
                kept.append(release)
        newest_first = tuple(kept)
    # Settled months first (NVIDIA's material settles their CUDA); the unverified ones only when none of those runs.
    # Within each: the newest month that runs natively, else under minor-version compatibility, else
    # through forward compatibility on a branch of NVIDIA's matrix.
    ordered = [r for r in newest_first if r.settled] + [r for r in newest_first if not r.settled]
    fits = {r.release: ngc_fit(host, r, today, live_only=True) for r in ordered}
    tier = {NATIVE: 0, MINOR: 1, FORWARD_COMPAT: 2}
    running = [r for r in ordered if fits[r.release].runs]
    chosen = min(running, key=lambda r: (not r.settled, tier[fits[r.release].mode], -r.key[0], -r.key[1])) if running else None
    for release in ordered:
        fit = fits[release.release]
        barred = barred or fit.forward_compat_barred
        if not fit.runs:
            rejected.append(Rejection(release.release, fit.why))
        elif chosen is not None and release is not chosen:
            if release.settled != chosen.settled:
                rejected.append(Rejection(release.release, f"its CUDA ({release.cuda}) is unverified in the table; "
                                          "releases whose CUDA NVIDIA's own material settles are preferred"))
            elif tier[fit.mode] > tier[fits[chosen.release].mode]:
                rejected.append(Rejection(release.release, f"{fit.why}; {chosen.release} runs "
                                          + _NGC_MODE_WORDS[fits[chosen.release].mode] + ", which is preferred"))
            else:
                rejected.append(Rejection(release.release, f"{fit.why}; {chosen.release} is newer"))
    rejected.sort(key=lambda r: tuple(-int(n) for n in r.variant.split(".")) if re.match(r"^\d{2}\.\d{2}$", r.variant) else (1, 1))
    if chosen is not None:
        release, fit = chosen, fits[chosen.release]
        cuda = release.cuda
        label = release.evidence_label
        evidence = "" if release.settled else f" (the table's CUDA {cuda} for {release.release} is unverified: see its note)"
        note = ""
        if barred:
            note = "; CUDA forward compatibility, which runs newer releases on older data-center driver branches, does not apply to these GPUs"
        support = {NATIVE: "full", FORWARD_COMPAT: "forward-compat"}.get(fit.mode, "minor-compat")
        if release.settled and label == "release-notes":
            notes: tuple[str, ...] = ()
        elif release.settled:
            notes = (
                f"secondary evidence: the CUDA of NGC PyTorch {release.release} ({cuda}) is settled by NVIDIA's own material for "
                "that month other than its PyTorch release-notes page (the table's note: " + release.note + ")",
            )
        else:
            notes = (
                f"unverified: the CUDA of NGC PyTorch {release.release} ({cuda}) is not settled by NVIDIA's material; "
                "it is recommended only because no month whose CUDA NVIDIA's material settles runs on this host"
                + (f" (the table's note: {release.note})" if release.note else ""),
            )
        how = {0: "natively", 1: "under minor-version compatibility (none runs natively)",
               2: "through CUDA forward compatibility (none runs natively or under minor-version compatibility)"}[tier[fit.mode]]
        return Recommendation(
            torch=release.torch_minor or "",
            family=family.name,
            variant=release.release,
            cuda=str(cuda.major_minor) if cuda else None,
            image=family.reference(release),
            support=support,
            why=f"{release.release} (CUDA {cuda}, PyTorch {release.pytorch or 'not recorded'}) is the newest release "
            + (f"holding PyTorch {torch} " if torch is not None else "")
            + f"this host runs {how}"
            + (", whose CUDA NVIDIA's release notes print" if label == "release-notes"
               else ", whose CUDA NVIDIA's own material settles (secondary evidence)" if release.settled
               else " (none whose CUDA NVIDIA's material settles does)")
            + f": {fit.why}{note}{evidence}",
            rejected=tuple(rejected),
            evidence=label,
            notes=notes,
        )
    fixes: list[str] = []
    actions: list[Action] = []
    smallest = _smallest_ngc_fix(host, [r for r in ordered if not fits[r.release].gpu_blocked], today)
    if smallest is not None:
        release, floor, support = smallest
        how = ", through CUDA forward compatibility" if support == "forward-compat" else ""
        unsure = "" if release.settled else "; its CUDA is unverified in the table"
        fixes.append(f"upgrade the driver to >= {floor} for {family.reference(release)} (CUDA {release.cuda}{how}{unsure})")
        full = host.table.min_driver_full(release.cuda) if release.cuda is not None else None
        full_floor = release.min_driver or (full.min_driver_linux if full else None)
        # A full driver past the GPUs' last branch is out of reach: none is named.
        full_text = None if host.past_ceiling(full_floor) else str(full_floor or floor)
        actions.append(Action("upgrade-driver", min_driver=str(floor), full_driver=full_text, variant=release.release,
                              cuda=str(release.cuda.major_minor) if release.cuda else None,
                              image=family.reference(release), support=support))
    why = "no NGC PyTorch release in the table runs on this host"
    if torch is not None:
        why = f"no NGC PyTorch release in the table holds PyTorch {torch} and runs on this host"
        if not newest_first:
            why = f"no NGC PyTorch release in the table is recorded as a PyTorch {torch} build"
    if barred:
        why += "; CUDA forward compatibility, which runs newer releases on older data-center driver branches, does not apply to these GPUs"
    return Recommendation(
        torch=torch or "", family=family.name, variant=None, cuda=None, image=None, support=None, why=why,
        rejected=tuple(rejected), fixes=tuple(fixes), actions=tuple(actions),
    )


_NGC_MODE_WORDS = {"native": "natively", "minor-compat": "under minor-version compatibility",
                   "forward-compat": "through CUDA forward compatibility"}


def _smallest_ngc_fix(
    host: HostView, releases: Sequence[NgcRelease], today: Optional[str] = None
) -> Optional[tuple[NgcRelease, DriverVersion, str]]:
    """(month, driver floor, support) for the smallest driver upgrade that makes one of ``releases``
    (already free of GPU problems, settled months first) run: the oldest forward-compatibility branch
    newer than the host's, where these GPUs can use forward compatibility, else the month's minimum
    driver. Settled months are preferred; unverified ones count only when no settled one has a floor.
    A branch past its end of life on ``today`` (the request's date, else the snapshot's, else the
    table's), or a New Feature Branch, is never offered."""
    from ..host.ngc import forward_compat_blockers

    driver = host.driver
    # Only GPUs known to be data-center ones (every one in scope) make forward compatibility a fix;
    # no GPU in scope, or one of unknown brand, does not.
    forward_ok = (
        host.table.forward_compat is not None
        and bool(host.gpus_in_scope)
        and all(host.model(gpu) is not None for gpu in host.gpus_in_scope)
        and not forward_compat_blockers(host, host.gpus_in_scope)
    )
    best: dict[bool, tuple[NgcRelease, DriverVersion, str]] = {}
    for release in releases:
        if release.cuda is None:
            continue
        options: list[tuple[DriverVersion, str]] = []
        row = host.table.min_driver_full(release.cuda)
        full = release.min_driver or (row.min_driver_linux if row else None)
        if full is not None:
            options.append((full, "full"))
        if forward_ok and host.table.forward_compat is not None:
            branches = release.forward_compat_branches
            if branches is None:
                branches = host.table.compat_branches_for(release.cuda) or ()
            for entry in host.table.forward_compat.branches:
                if entry.branch not in branches or (driver is not None and entry.branch <= driver.branch):
                    continue
                if not entry.live_on(host.table.reference_date(today, host.facts.probed_at)):
                    continue
                floor_row = host.table.min_driver_full(entry.cuda)
                floor = floor_row.min_driver_linux if floor_row is not None and floor_row.min_driver_linux.branch == entry.branch else None
                options.append((floor or DriverVersion.parse(str(entry.branch)), "forward-compat"))
        options = [o for o in options if (driver is None or o[0] > driver) and not host.past_ceiling(o[0])]
        if not options:
            continue
        floor, support = min(options, key=lambda o: o[0])
        held = best.get(release.settled)
        if held is None or floor < held[1]:
            best[release.settled] = (release, floor, support)
    return best.get(True) or best.get(False)
