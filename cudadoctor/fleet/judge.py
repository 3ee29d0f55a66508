"""Judge a fleet: the pure check, run once per distinct kind of host, and the fleet's answer.

Hosts whose facts are equal apart from their names (and, unless ``CUDA_VISIBLE_DEVICES`` could
name a GPU by them, their GPUs' UUIDs and PCI addresses) get the same verdict from the pure check,
so they form one group and the check runs once for it: 10 000 nodes of 40 kinds cost 40 checks.
"""

from __future__ import annotations

from functools import cached_property
from itertools import chain
from operator import attrgetter
from typing import Iterable, Optional, Sequence

from ..compat.table import CompatTable, PytorchRelease, WheelVariant
from ..doctor.answer import BUILD_FAILURES, USE_INSTEAD, Answer, decide
from ..doctor.check import CheckResult, check
from ..host.view import HostView
from ..doctor.request import Request
from ..model.facts import DriverFacts, GpuFacts, HostFacts, ImageFacts
from ..model.findings import FAIL, WARN, Finding
from ..model.record import field, record, replace
from ..model.versions import CudaVersion
from ..recommend import Recommendation
from .gfd import LABEL_GAPS
from .share import SharedChecks
from .sources import NODE_LABELS, FleetHost, SourceProblem, identity_free

UNKNOWN = "unknown"
MINOR_COMPAT_CODE = "driver-minor-compat"  # the driver runs the target's CUDA under minor-version compatibility
VERDICTS = ("ok", "warn", "fail", UNKNOWN)


@record
class GpuKind:
    name: Optional[str]
    compute_capability: Optional[str]
    count: int


@record
class HostGroup:
    """Hosts the check cannot tell apart, and its result for them (None: nothing to judge), as
    the fleet keeps it (_Kept: every finding's code and severity, the words of those that warn
    or fail); ``answer`` was decided from the whole result."""

    hosts: tuple[FleetHost, ...]
    facts: Optional[HostFacts]
    result: Optional[CheckResult]
    missing: tuple[str, ...]  # facts the hosts' sources do not carry
    answer: Optional[Answer] = None  # the one thing to do for these hosts (doctor/answer.py), as `check` says it
    # The class of hosts whose check this group shares (fleet/share.py); None: judged alone.
    shared: Optional[object] = field(default=None, repr=False)

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(h.name for h in self.hosts)

    @property
    def verdict(self) -> str:
        return self.result.verdict if self.result is not None else UNKNOWN

    @property
    def blocking(self) -> tuple[str, ...]:
        """The codes of the findings that fail (else warn), each once, in report order."""
        if self.result is None:
            return ()
        fails: dict[str, None] = {}
        warns: dict[str, None] = {}
        for finding in self.result.findings:  # one pass for both: every group's entry asks
            severity = finding.severity
            if severity == FAIL:
                fails[finding.code] = None
            elif severity == WARN and not fails:
                warns[finding.code] = None
        return tuple(fails or warns)

    @property
    def driver(self) -> Optional[str]:
        return self.facts.driver.driver_version if self.facts is not None else None

    @property
    def gpu_kinds(self) -> tuple[GpuKind, ...]:
        if self.facts is None:
            return ()
        counts: dict[tuple[Optional[str], Optional[str]], int] = {}
        for gpu in self.facts.gpus:
            key = (gpu.name, gpu.compute_capability)
            counts[key] = counts.get(key, 0) + 1
        return tuple(GpuKind(name, cc, n) for (name, cc), n in counts.items())

    @property
    def os(self) -> Optional[str]:
        system = self.facts.system if self.facts is not None else None
        if system is None or not (system.os or system.machine):
            return None
        return f"{system.os}/{system.machine}" if system.os and system.machine else system.os or system.machine

    @property
    def fix(self) -> Optional[str]:
        """The answer's fix for these hosts when they fail: the same words `check` prints."""
        if self.answer is None or self.verdict != FAIL or self.answer.fix is None:
            return None
        return self.answer.fix.text

    @cached_property
    def broken(self) -> bool:
        """A failure no build avoids (no driver, no GPU, a lost GPU ...): no candidate runs here
        (worked out once per group: every candidate asks)."""
        return self.result is not None and any(f.severity == FAIL and f.code not in BUILD_FAILURES for f in self.result.findings)


@record
class LeftOut:
    """Hosts a fleet-wide choice does not run on, the codes that say why, and the change that
    would bring them in."""

    hosts: tuple[str, ...]
    verdict: str
    findings: tuple[str, ...]
    fix: Optional[str] = None


@record
class Coverage:
    """One candidate for the whole fleet: how many judged hosts it runs on (ok or warn)."""

    variant: Optional[str]
    cuda: Optional[str]
    image: Optional[str]
    hosts: int
    left_out: tuple[LeftOut, ...]
    # Of ``hosts``, those whose driver runs it only under minor-version compatibility (no PTX JIT,
    # and features that need a newer driver missing): at equal reach, fewer is better.
    minor_compat_hosts: int = 0
    torch: Optional[str] = None  # the PyTorch release (None for an image whose release is not known)


@record
class Duplicate:
    name: str
    sources: tuple[str, ...]


@record
class FleetResult:
    request: Request
    hosts: tuple[FleetHost, ...]
    groups: tuple[HostGroup, ...]
    answer: Optional[Coverage]  # the choice that runs on the most hosts (None: nothing judged)
    candidates: tuple[Coverage, ...]  # every candidate considered, best first
    problems: tuple[SourceProblem, ...]
    duplicates: tuple[Duplicate, ...]

    def count(self, verdict: str) -> int:
        return sum(len(g.hosts) for g in self.groups if g.verdict == verdict)

    @property
    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(VERDICTS, 0)  # one pass over the groups (10 000 of a varied fleet)
        for group in self.groups:
            verdict = group.verdict
            if verdict in counts:
                counts[verdict] += len(group.hosts)
        return counts

    def exit_status(self) -> int:
        return 1 if self.count(FAIL) else 0


def _codes(result: CheckResult, severity: str) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for finding in result.findings:
        if finding.severity == severity:
            seen.setdefault(finding.code, None)
    return tuple(seen)


def _missing(host: FleetHost) -> tuple[str, ...]:
    if host.facts is None:
        return ("gpu-labels",)
    if host.origin == NODE_LABELS:
        return LABEL_GAPS
    facts = host.facts
    gaps = [name for name, value in (("system", facts.system), ("docker", facts.docker), ("torch", facts.torch)) if value is None]
    return tuple(gaps)


def verdict_key(kind: HostFacts, request: Optional[Request] = None) -> HostFacts:
    """What decides a host's verdict, of its identity-free facts (sources.identity_free): unless
    --min-memory asks about memory, a GPU's memory size decides nothing but whether the GPUs of a
    job differ in it (multi-gpu-mixed), so each size stands as its rank among the host's sizes.
    Every other fact a check reads stays as it is. Without a request, the facts are the key."""
    if request is None or request.min_memory_bytes is not None:
        return kind
    sizes = sorted({g.memory_total_bytes for g in kind.gpus if g.memory_total_bytes})
    if not sizes:
        return kind
    rank = {size: i + 1 for i, size in enumerate(sizes)}
    gpus = tuple(replace(g, memory_total_bytes=rank[g.memory_total_bytes]) if g.memory_total_bytes else g for g in kind.gpus)
    return replace(kind, gpus=gpus)


def group_hosts(
    hosts: Iterable[FleetHost], request: Optional[Request] = None
) -> list[tuple[Optional[HostFacts], tuple[str, ...], list[FleetHost]]]:
    """(representative facts, missing facts, hosts) for each distinct kind of host, in first-seen
    order; with ``request``, hosts whose facts differ only where its verdict cannot (verdict_key)
    are one kind, judged on the first one's facts."""
    return [(kind.facts, kind.missing, kind.hosts) for kind in _kinds(hosts, request)]


class _Kind:
    """One distinct kind of host: what decides its verdict but the driver's version (``rest``:
    one object for every kind equal in it, so fleet/share.py can name it by identity), the
    driver's version, the representative facts, the facts its sources lack, and its hosts."""

    __slots__ = ("rest", "driver", "facts", "missing", "hosts")

    def __init__(self, rest: Optional[HostFacts], driver: Optional[str], facts: Optional[HostFacts], missing: tuple[str, ...]):
        self.rest = rest
        self.driver = driver
        self.facts = facts
        self.missing = missing
        self.hosts: list[FleetHost] = []


_DRIVER_REST = attrgetter(*(name for name in DriverFacts.__record_names__ if name != "driver_version"))  # type: ignore[attr-defined]
_GPU_REST = attrgetter(*(name for name in GpuFacts.__record_names__ if name != "memory_total_bytes"))  # type: ignore[attr-defined]


class _Rests:
    """Each distinct verdict key without its driver's version (``rest``), as one object. Found by
    the identity of its parts first: nodes labelled alike share their GPUs' and platform's objects
    (fleet/gfd.py), so most hosts are placed without hashing their facts; facts equal but not
    shared are found by value, as before."""

    def __init__(self, request: Optional[Request]):
        self.request = request
        self.by_value: dict[HostFacts, HostFacts] = {}
        self.drivers: dict[DriverFacts, DriverFacts] = {}  # each driver's facts without its version, once
        self.driver_by_values: dict[tuple[object, ...], DriverFacts] = {}  # (type, the other fields' values) -> that
        self.gpus: dict[tuple[GpuFacts, ...], tuple[GpuFacts, ...]] = {}  # each host's GPUs as the key has them, once
        self.ranked: dict[int, tuple[tuple[GpuFacts, ...], tuple[GpuFacts, ...]]] = {}  # id(gpus) -> (gpus, as the key has them)
        # each GPU's other fields with its memory's rank -> the GPUs as the key has them (see of)
        self.by_ranks: dict[tuple[object, ...], tuple[GpuFacts, ...]] = {}
        # The memos hold every object whose id they are keyed by, so no id is reused while it is a key.
        self.by_parts: dict[tuple[object, ...], tuple[HostFacts, HostFacts]] = {}

    def of(self, kind: HostFacts) -> HostFacts:
        """verdict_key(kind, request), its driver's version taken out."""
        memo = self.ranked.get(id(kind.gpus))
        if memo is None:
            memo = self.ranked[id(kind.gpus)] = (kind.gpus, self._ranked_gpus(kind))
        gpus = memo[1]
        # Nodes differ by driver version far more than by the rest of the driver's facts: those
        # are looked up by their values (a tuple hashed in C) before a copy is made and interned.
        values = (type(kind.driver), _DRIVER_REST(kind.driver))
        driver = self.driver_by_values.get(values)
        if driver is None:
            driver = replace(kind.driver, driver_version=None) if kind.driver.driver_version is not None else kind.driver
            driver = self.driver_by_values[values] = self.drivers.setdefault(driver, driver)
        parts = (id(gpus), id(driver), id(kind.system), id(kind.docker), id(kind.torch), kind.hostname, kind.probed_at,
                 kind.cudadoctor_version)
        known = self.by_parts.get(parts)
        if known is None:
            rest = replace(kind, driver=driver, gpus=gpus)
            rest = self.by_value.setdefault(rest, rest)
            known = self.by_parts[parts] = (rest, kind)
        return known[0]

    def _ranked_gpus(self, kind: HostFacts) -> tuple[GpuFacts, ...]:
        """verdict_key's GPUs (they depend on the GPUs alone), one object for every equal value:
        hosts whose GPUs differ only in memory size rank alike. Found first by each GPU's type,
        other fields and memory's rank (tuples made in C), before a copy of every GPU is made: a
        distinct fleet's nodes label thousands of sizes of a few dozen GPU sets."""
        ranks: Optional[tuple[object, ...]] = None
        if self.request is not None and self.request.min_memory_bytes is None:  # as verdict_key ranks them
            sizes = sorted({g.memory_total_bytes for g in kind.gpus if g.memory_total_bytes})
            rank: dict[Optional[int], Optional[int]] = {size: i + 1 for i, size in enumerate(sizes)}
            ranks = tuple((type(g), _GPU_REST(g), rank.get(g.memory_total_bytes, g.memory_total_bytes)) for g in kind.gpus)
            known = self.by_ranks.get(ranks)
            if known is not None:
                return known
        gpus = verdict_key(kind, self.request).gpus
        gpus = self.gpus.setdefault(gpus, gpus)
        if ranks is not None:
            self.by_ranks[ranks] = gpus
        return gpus


def _kinds(hosts: Iterable[FleetHost], request: Optional[Request]) -> list[_Kind]:
    groups: dict[tuple[int, Optional[str], tuple[str, ...]], _Kind] = {}
    rests = _Rests(request)
    # Hosts of one kind share one identity-free facts object (sources.py): look each up once.
    # The memo holds each object it names, so an id is never reused while it is a key.
    by_object: dict[tuple[int, str], _Kind] = {}
    for host in hosts:
        kind = host.kind if host.kind is not None or host.facts is None else identity_free(host.facts)
        memo = (id(kind), host.origin)
        known = by_object.get(memo)
        if known is None:
            missing = _missing(host)
            rest = rests.of(kind) if kind is not None else None
            driver = kind.driver.driver_version if kind is not None else None
            key = (id(rest), driver, missing)  # ``rests`` holds every rest: no id is reused
            known = groups.get(key)
            if known is None:
                known = groups[key] = _Kind(rest, driver, kind, missing)
            by_object[memo] = known
        known.hosts.append(host)
    return list(groups.values())


def _duplicates(hosts: Sequence[FleetHost]) -> tuple[Duplicate, ...]:
    seen: dict[str, list[str]] = {}
    for host in hosts:
        seen.setdefault(host.name, []).append(host.source)
    return tuple(Duplicate(name, tuple(sources)) for name, sources in seen.items() if len(sources) > 1)


def _bringing_in(answer: Answer, result: CheckResult) -> Optional[str]:
    """The change that lets hosts run the build that was judged: the answer's fix, or, where the
    answer is another build, what would run the one asked for; where no driver would (a GPU the
    build carries no code for), that failure's own hint."""
    if answer.kind != USE_INSTEAD:
        return answer.fix.text if answer.fix is not None else None
    if answer.other:
        return answer.other[0].text
    fails = [f for f in result.findings if f.severity == FAIL and f.hint]
    blocker = next((f for f in fails if f.code in ("gpu-arch-not-built", "gpu-arch-ptx-only")), fails[0] if fails else None)
    return blocker.hint if blocker is not None else None


def _merged(left: Sequence[LeftOut]) -> tuple[LeftOut, ...]:
    """Left-out groups that fail for the same codes with the same fix are one entry (their hosts
    together, in order): a fleet of many kinds lists each reason once per candidate, not once per kind."""
    merged: dict[tuple[str, tuple[str, ...], Optional[str]], list[str]] = {}
    for entry in left:
        merged.setdefault((entry.verdict, entry.findings, entry.fix), []).extend(entry.hosts)
    return tuple(LeftOut(tuple(hosts), verdict, findings, fix) for (verdict, findings, fix), hosts in merged.items())


def _coverage(
    groups: Sequence[HostGroup], results: Sequence[Optional[CheckResult]], variant: Optional[WheelVariant], image: Optional[str],
    table: CompatTable,
) -> Coverage:
    runs = minor_compat = 0
    left: list[LeftOut] = []
    for group, result in zip(groups, results):
        if result is None:
            continue
        if result.verdict != FAIL:
            runs += len(group.hosts)
            if any(f.code == MINOR_COMPAT_CODE for f in result.findings):
                minor_compat += len(group.hosts)
        else:
            answer = group.answer if result is group.result and group.answer is not None else decide(result, table)
            left.append(LeftOut(group.names, result.verdict, _codes(result, FAIL), _bringing_in(answer, result)))
    return Coverage(
        variant=variant.name if variant is not None else None,
        cuda=str(variant.cuda.major_minor) if variant is not None else None,
        image=image,
        hosts=runs,
        left_out=_merged(left),
        minor_compat_hosts=minor_compat,
    )


def _fixed_target(groups: Sequence[HostGroup], table: CompatTable, request: Request) -> Coverage:
    """--image or --variant: the target is given; the answer is how far it reaches."""
    results = [g.result for g in groups]
    target = next((r.target for r in results if r is not None and r.target is not None), None)
    variant = request.variant
    image = str(request.image) if request.image is not None else (target.image if target is not None else None)
    coverage = _coverage(groups, results, variant, image, table)
    if variant is None and target is not None:
        coverage = replace(coverage, variant=target.variant, cuda=target.cuda)
    return coverage


BuildKey = tuple[object, ...]


def _build_key(view: HostView, cudas: Sequence[CudaVersion]) -> BuildKey:
    """Everything a build's reach on a host reads (recommend.fit_tier and build_fix): the platform,
    NVML's state, the driver's support tier for every CUDA the table's builds use, and the GPUs in
    scope as the builds see them (model name and compute capability). Groups with equal keys are
    judged once per build: 10 000 kinds of node on a few dozen drivers' tiers cost a few hundred
    judgements per build, not 10 000."""
    key = _BuildReads(view, _tiers(view, cudas)).key(cudas)
    assert key is not None  # every one of ``cudas`` was read
    return key


def _tiers(view: HostView, cudas: Iterable[CudaVersion]) -> dict[CudaVersion, str]:
    return {cuda: view.support(cuda).tier for cuda in cudas}


class _BuildReads:
    """What _build_key reads of a host's view: the key for any of the CUDA versions its tiers
    were read for, in their order."""

    __slots__ = ("head", "tiers")

    def __init__(self, view: HostView, tiers: dict[CudaVersion, str]):
        names = tuple(sorted({(gpu.name or "unknown model", str(cc)) for gpu in view.gpus_in_scope if (cc := view.cc(gpu)) is not None}))
        self.head = (view.platform, view.nvml_ok, view.ccs_in_scope, names)
        self.tiers = tiers

    def key(self, cudas: Sequence[CudaVersion]) -> Optional[BuildKey]:
        """The key for these CUDA versions; None when one of them was not read."""
        tiers = self.tiers
        if not all(cuda in tiers for cuda in cudas):
            return None
        return (*self.head, tuple(tiers[cuda] for cuda in cudas))


def table_cudas(table: CompatTable) -> tuple[CudaVersion, ...]:
    """Every CUDA version (major.minor) the table's wheel builds use, once per table: any
    releases' candidates read the tiers of some of these."""
    memo = table.memo("fleet.judge")
    cudas = memo.get("cudas")
    if cudas is None:
        cudas = memo["cudas"] = tuple(dict.fromkeys(v.cuda.major_minor for r in table.pytorch_releases for v in r.variants))
    return cudas


class _Reads:
    """What each judged host's check saw that the candidates read (_BuildReads), kept while the
    check's view is alive: a fleet drops each view once its host is judged, and building it again
    for the candidates was a seventh of a varied fleet's judging. Kept per class (fleet/share.py's
    key), else per facts judged (with those facts, so an id is checked to be theirs). A class's
    driver tiers are its drivers' place among the table's versions with what NVML says they
    support: read once per such pair, not once per class."""

    def __init__(self, table: CompatTable, shared: Optional[SharedChecks]):
        self.cudas = table_cudas(table)
        self.shared = shared
        self.by: dict[object, tuple[object, _BuildReads]] = {}
        self.tiers_of: dict[object, dict[CudaVersion, str]] = {}

    def keep(self, share: Optional[object], facts: HostFacts, table: CompatTable) -> None:
        """Read the judged host's view (its check's), once per class."""
        where_kept = share if share is not None else id(facts)
        if where_kept in self.by:
            return
        view = HostView.of(facts, table)
        place = self.shared.driver_position(share) if self.shared is not None and view.forward_compat_cuda is None else None
        if place is None:
            tiers = _tiers(view, self.cudas)
        else:
            tiers_key = (place, view.driver_cuda, view.nvml_cuda)
            known = self.tiers_of.get(tiers_key)
            tiers = known if known is not None else self.tiers_of.setdefault(tiers_key, _tiers(view, self.cudas))
        self.by[where_kept] = (facts, _BuildReads(view, tiers))

    def key(self, group: HostGroup, cudas: Sequence[CudaVersion]) -> Optional[BuildKey]:
        """The group's _build_key for these CUDA versions, where it was kept."""
        if group.shared is not None:
            read = self.by.get(group.shared)
        else:
            read = self.by.get(id(group.facts))
            read = read if read is not None and read[0] is group.facts else None
        return read[1].key(cudas) if read is not None else None


Reason = tuple[tuple[str, ...], Optional[str]]  # (the codes that say why a build leaves hosts out, the fix)


class _Bucket:
    """Judged groups whose builds' reach is one judgement (equal _build_key; broken groups each
    their own): their views' first, the hosts in group order, where the first of them stands."""

    __slots__ = ("first", "view", "hosts", "names", "broken")

    def __init__(self, first: int, view: HostView, broken: Optional[Reason]):
        self.first = first
        self.view = view
        self.hosts = 0
        self.names: list[str] = []
        self.broken = broken  # a failure no build avoids: left out by every build, for this reason


def _buckets(
    groups: Sequence[HostGroup], table: CompatTable, cudas: Sequence[CudaVersion], reads: Optional[_Reads] = None
) -> list[_Bucket]:
    """The groups in buckets; a view that is not its bucket's first is dropped once its key is
    known (only the first is judged: with 10 000 kinds, their memos were most of the peak).
    ``reads``: what each judged group's check saw (_judge_fleet), where it was kept."""
    buckets: dict[object, _Bucket] = {}
    # Groups that share a check (fleet/share.py) read alike to every build: their key is worked out once.
    keys_of_shared: dict[object, object] = {}
    for index, group in enumerate(groups):
        if group.result is None or group.facts is None:
            continue
        # A class's groups have one result but for the words: a class with a key is not broken.
        known = keys_of_shared.get(group.shared) if group.shared is not None else None
        if known is None and group.broken:
            reason: Optional[Reason] = (tuple(c for c in _codes(group.result, FAIL) if c not in BUILD_FAILURES), group.fix)
            key: object = ("broken", reason)
        else:
            reason = None
            if known is None:
                known = reads.key(group, cudas) if reads is not None else None
                if known is None:
                    known = _build_key(HostView.of(group.facts, table), cudas)
                if group.shared is not None:
                    keys_of_shared[group.shared] = known
                HostView.forget(group.facts)
            key = known
        bucket = buckets.get(key)
        if bucket is None:
            bucket = buckets[key] = _Bucket(index, HostView.of(group.facts, table), reason)
        bucket.hosts += len(group.hosts)
        bucket.names.extend(group.names)
    return list(buckets.values())


def _build_coverage(buckets: Sequence[_Bucket], request: Request, release: PytorchRelease, name: str) -> Coverage:
    """How far one build reaches: a group runs it when nothing but the build failed there (groups with
    another failure run nothing) and the build fits its driver and GPUs (recommend.fit_tier, the
    recommender's own test), judged once per bucket of groups that read alike. Hosts left out for
    the same codes with the same fix are one entry, in the order the groups come."""
    from ..recommend import build_fix, fit_tier

    variant = release.variant(name)
    runs = minor_compat = 0
    left: dict[Reason, tuple[int, list[list[str]]]] = {}
    for bucket in buckets:
        if bucket.broken is not None:
            reason = bucket.broken
        else:
            tier = fit_tier(bucket.view, release, name)
            if tier is not None:
                runs += bucket.hosts
                minor_compat += bucket.hosts if tier == "minor-compat" else 0
                continue
            fix, code = build_fix(bucket.view, release, name)
            reason = ((code,) if code else (), fix)
        entry = left.get(reason)
        if entry is None:
            left[reason] = (bucket.first, [bucket.names])
        else:
            entry[1].append(bucket.names)
    ordered = sorted(left.items(), key=lambda item: item[1][0])
    family = request.family.wheel_family
    offered = name in family.variants_for(release)
    return Coverage(
        variant=name,
        cuda=str(variant.cuda.major_minor) if variant is not None else None,
        image=family.reference(release, variant) if variant is not None and offered else None,
        hosts=runs,
        left_out=tuple(
            LeftOut(tuple(chain.from_iterable(lists)), FAIL, codes, fix) for (codes, fix), (_, lists) in ordered
        ),
        minor_compat_hosts=minor_compat,
        torch=release.version,
    )


class _Reach:
    """How far a family's candidates reach over the fleet's groups (doctor/family.CandidateReach)."""

    def __init__(self, groups: Sequence[HostGroup], table: CompatTable, request: Request, reads: Optional[_Reads] = None):
        self.groups, self.table, self.request, self.reads = groups, table, request, reads

    def wheel_builds(self, releases: Sequence[PytorchRelease]) -> list[Coverage]:
        """Every wheel build of ``releases``, as each group's own check judges wheels, with the
        family's image where it has one: the most hosts first; among equals the newest release, then
        full driver support before minor-version compatibility, then a build with an image, then the
        newest CUDA."""
        from ..recommend import considered

        cudas = tuple(dict.fromkeys(variant.cuda.major_minor for release in releases for variant in release.variants))
        buckets = _buckets(self.groups, self.table, cudas, self.reads)
        ranked: list[tuple[Coverage, PytorchRelease]] = []
        for release in releases:
            for name in considered(release, self.request.family.wheel_family, images=False):
                if release.variant(name) is not None:
                    ranked.append((_build_coverage(buckets, self.request, release, name), release))
        ranked.sort(key=lambda r: (-r[0].hosts, tuple(-n for n in r[1].key), r[0].minor_compat_hosts, r[0].image is None,
                                   tuple(-int(n) for n in (r[0].cuda or "0").split("."))))
        return [coverage for coverage, _ in ranked]

    def image(self, request: Request, image: str) -> Coverage:
        """``request`` (naming ``image``) checked on every group."""
        results = [check(g.facts, self.table, request) if g.facts is not None else None for g in self.groups]
        return _coverage(self.groups, results, None, image, self.table)


class _Kept:
    """What a judged group keeps of its check's result, once its answer is decided: what the
    fleet's reports read (fleet/payload.py, matrix.py, plan.py, prometheus.py, affinity.py,
    report/fleet_text.py, fleet_html.py): the verdict, the target, the recommendation's choice
    (_choice: not the reasons for every build it passed over), and every finding's code and
    severity, with the words only of those that warn or fail (the page lists those). A finding that passes
    becomes one shared stand-in per code and severity: 10 000 kinds of host kept about 30 worded
    findings each (half the fleet's memory) that no fleet report prints."""

    __slots__ = ("stand_ins", "shared")

    def __init__(self, shared: Optional[SharedChecks] = None) -> None:
        self.stand_ins: dict[tuple[str, str, str, str], Finding] = {}
        self.shared = shared  # told of each stand-in: every result may hold it, no rewrite need walk it

    def finding(self, f: Finding) -> Finding:
        if f.severity in (FAIL, WARN):
            return f
        key = (f.code, f.severity, f.subject, f.group)
        stand_in = self.stand_ins.get(key)
        if stand_in is None:
            stand_in = self.stand_ins[key] = Finding(code=f.code, severity=f.severity, title="", subject=f.subject, group=f.group)
            if self.shared is not None:
                self.shared.hold_inert(stand_in)
        return stand_in

    def __call__(self, result: CheckResult) -> CheckResult:
        return replace(result, findings=tuple(self.finding(f) for f in result.findings), recommendation=_choice(result.recommendation))


def _choice(rec: Recommendation) -> Recommendation:
    """What the fleet's reports read of a recommendation: the build it chose (its release, variant,
    CUDA, image and support tier) and where pip finds it. Not the builds it passed over, the other
    release that fits, the newest release's own recommendation, nor its fixes, actions and notes:
    the answer has read those, and their words quote the host's driver, so a shared class would
    rewrite them for every host (and plan that rewrite by walking them) for no report."""
    return replace(rec, **_NOT_KEPT) if any(getattr(rec, name) for name in _NOT_KEPT) else rec


# The fields _choice empties, with their empty values (every one is falsy; a record is not).
_NOT_KEPT = {"rejected": (), "alternative": None, "newest": None, "reachable": None, "fixes": (), "actions": (),
             "notes": (), "caveats": (), "unverified": (), "inferred": ()}


def judge_fleet(
    hosts: Sequence[FleetHost],
    table: CompatTable,
    request: Request,
    image: Optional[ImageFacts] = None,
    problems: Sequence[SourceProblem] = (),
) -> FleetResult:
    """Group the hosts, check each group once, and find the build that runs on the most hosts.

    Python's cyclic garbage collector is paused while it runs: judging allocates many small,
    acyclic frozen values, and with 10 000 hosts' facts alive each collection walks them all
    again (a third of the time); reference counting frees them as before."""
    import gc

    paused = gc.isenabled()
    gc.disable()
    try:
        return _judge_fleet(hosts, table, request, image, problems)
    finally:
        if paused:
            gc.enable()


def _judge_fleet(
    hosts: Sequence[FleetHost],
    table: CompatTable,
    request: Request,
    image: Optional[ImageFacts],
    problems: Sequence[SourceProblem],
) -> FleetResult:
    groups = []
    shared = SharedChecks(table, request) if image is None else None
    kept = _Kept(shared)
    # Only a family's wheel builds read them (not an NGC month, an --image or a --variant).
    wheels = request.family.offers_wheels and request.image is None and request.variant is None
    reads = _Reads(table, shared) if wheels else None
    for kind in _kinds(hosts, request):
        facts, missing, members = kind.facts, kind.missing, tuple(kind.hosts)
        if facts is None:
            groups.append(HostGroup(members, None, None, missing, None))
            continue
        share = shared.key(kind.rest, kind.driver, facts) if shared is not None else None
        known = shared.get(share, facts) if shared is not None else None
        if known is not None:
            groups.append(HostGroup(members, facts, known[0], missing, known[1], share))
            continue
        result = check(facts, table, request, image=image)
        answer = decide(result, table)
        if reads is not None:
            reads.keep(share, facts, table)
        HostView.forget(facts)
        # The answer is worked out from the whole result; the group keeps what the reports read.
        judged = kept(result)
        if shared is not None:
            shared.put(share, facts, judged, answer)
        groups.append(HostGroup(members, facts, judged, missing, answer, share))
    groups.sort(key=lambda g: -len(g.hosts))

    candidates: list[Coverage] = []
    if any(g.result is not None for g in groups):
        if request.image is not None or request.variant is not None:
            candidates.append(_fixed_target(groups, table, request))
        else:  # the family's own candidates: every wheel build, or every NGC month
            candidates.extend(request.family.candidates(table, request, _Reach(groups, table, request, reads)))
    for group in groups:  # the views (and their memos) were for judging: the result keeps what it says
        if group.facts is not None:
            HostView.forget(group.facts)
    return FleetResult(
        request=request,
        hosts=tuple(hosts),
        groups=tuple(groups),
        answer=candidates[0] if candidates else None,
        candidates=tuple(candidates),
        problems=tuple(problems),
        duplicates=_duplicates(hosts),
    )
