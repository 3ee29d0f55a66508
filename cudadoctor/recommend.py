"""Pick the CUDA variant (and image tag) that fits this host, and say why the others lost.

Policy: among the variants the image family offers for the release, keep those whose builds
carry code for every GPU in scope and whose toolkit supports each GPU. Prefer the ones the driver
supports fully (Table 3 minimum), then those that run under minor-version compatibility; within
a tier the newest CUDA wins. Pure: the host view (facts and table) in, a Recommendation out.
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

from .compat.table import ImageFamily, PytorchRelease, WheelVariant
from .host.view import TOO_OLD, DriverSupport, HostView, gpu_label
from .model.facts import GpuFacts
from .model.findings import Action
from .model.record import field, record
from .model.versions import ComputeCapability

TIER_RANK = {"full": 0, "minor-compat": 1, "unknown": 2}


@record
class Rejection:
    variant: str
    reason: str


@record
class Recommendation:
    """The chosen variant, or none, with the reasons for every verdict."""

    torch: str
    family: str
    variant: Optional[str]
    cuda: Optional[str]
    image: Optional[str]
    support: Optional[str]  # full | minor-compat | unknown (driver not known)
    why: str
    wheel_index_url: Optional[str] = None
    rejected: tuple[Rejection, ...] = ()
    fixes: tuple[str, ...] = field(default_factory=tuple)  # what would make something fit, when nothing does
    actions: tuple[Action, ...] = ()  # the fixes as data, in the same order
    alternative: Optional["Recommendation"] = None  # the other release that fits as the host is, if any

    @property
    def found(self) -> bool:
        return self.variant is not None


def _blocked_gpus(host: HostView, variant: WheelVariant) -> Iterator[tuple[GpuFacts, ComputeCapability, str]]:
    """(GPU, compute capability, why) for each GPU in scope the variant cannot run on. A GPU of
    unknown compute capability is judged by the gpu checks, not here."""
    for gpu in host.gpus_in_scope:
        cc = host.cc(gpu)
        if cc is not None:
            verdict = host.runs(variant, cc)
            if verdict not in ("sass", "ptx"):
                yield gpu, cc, verdict


def _gpu_blockers(host: HostView, variant: WheelVariant) -> list[str]:
    """Why this variant cannot run on some GPU in scope (empty: it covers every GPU)."""
    problems = []
    toolkit = host.table.toolkit_architectures_for(variant.cuda)
    for gpu, cc, verdict in _blocked_gpus(host, variant):
        if verdict == "toolkit" and toolkit is not None:
            problems.append(
                f"CUDA {variant.cuda.major_minor} cannot build for {gpu_label(gpu)}, {cc.sm} "
                f"(it supports {toolkit.min_cc.sm} to {toolkit.max_cc.sm})"
            )
        elif verdict == "not-built":
            problems.append(f"its wheels carry no code for {gpu_label(gpu)}, {cc.sm} (built for {variant.arch_summary()})")
        elif verdict == "ptx-minor-compat":
            problems.append(
                f"its wheels carry only PTX for {gpu_label(gpu)}, {cc.sm}, which this driver cannot JIT-compile "
                "under minor-version compatibility"
            )
    return problems


def _covers_gpus(host: HostView, variant: WheelVariant) -> bool:
    """The variant runs on every GPU in scope (what _gpu_blockers says, without building its text)."""
    return next(_blocked_gpus(host, variant), None) is None


def _fits(host: HostView, variant: Optional[WheelVariant]) -> bool:
    return variant is not None and _covers_gpus(host, variant) and host.support(variant.cuda).tier != TOO_OLD


def _driver_reason(tier: str, support: DriverSupport, variant: WheelVariant) -> str:
    driver = support.driver or "this driver"
    if tier == "too-old":
        floor = support.compat_min or support.full_min
        return f"needs driver >= {floor} (CUDA {variant.cuda.major_minor}); driver {driver} is older"
    if tier == "minor-compat":
        return f"runs only under minor-version compatibility (full support needs driver >= {support.full_min})"
    return ""


Fixes = tuple[list[str], list[Action], Optional[Recommendation]]
_NO_FIXES: Fixes = ([], [], None)


def _no_fit(
    release: PytorchRelease, family: ImageFamily, why: str, rejected: Sequence[Rejection] = (), fixes: Fixes = _NO_FIXES
) -> Recommendation:
    words, actions, alternative = fixes
    return Recommendation(
        torch=release.version,
        family=family.name,
        variant=None,
        cuda=None,
        image=None,
        support=None,
        why=why,
        rejected=tuple(rejected),
        fixes=tuple(words),
        actions=tuple(actions),
        alternative=alternative,
    )


def recommend(
    host: HostView,
    release: Optional[PytorchRelease] = None,
    family: Optional[ImageFamily] = None,
    suggest_other_releases: bool = True,
) -> Recommendation:
    table, facts = host.table, host.facts
    release = release or table.default_release
    family = family or table.image_families[0]
    offered = family.variants_for(release)
    if host.nvml_ok and facts.driver.source == "nvml" and not host.gpus_in_scope:
        # A driver with no visible GPU runs no CUDA build at all; recommending one would mislead.
        return _no_fit(
            release,
            family,
            "the driver answers but no GPU is visible to CUDA here",
            fixes=(["make a GPU visible (see the no-gpu finding), then run cudadoctor again"], [Action("make-gpu-visible")], None),
        )
    candidates: list[tuple[int, WheelVariant, str]] = []
    rejected: list[Rejection] = []
    for name in offered:
        variant = release.variant(name)
        if variant is None:
            continue
        blockers = _gpu_blockers(host, variant)
        support = host.support(variant.cuda)
        if blockers:
            rejected.append(Rejection(name, "; ".join(blockers)))
            continue
        if support.tier == "too-old":
            rejected.append(Rejection(name, _driver_reason("too-old", support, variant)))
            continue
        candidates.append((TIER_RANK[support.tier], variant, support.tier))
    if not offered:
        return _no_fit(
            release,
            family,
            f"the {family.name} family offers no image for PyTorch {release.version}",
            fixes=_other_releases(host, family, release) if suggest_other_releases else _NO_FIXES,
        )
    if not candidates:
        return _no_fit(
            release,
            family,
            f"no CUDA variant of PyTorch {release.version} fits this host"
            + (
                f" (the table records only {', '.join(v.name for v in release.variants)} of this release)"
                if not release.variants_complete
                else ""
            ),
            rejected,
            _fixes(host, family, release, suggest_other_releases),
        )
    # Best tier first; within it the newest CUDA.
    candidates.sort(key=lambda c: (c[0], tuple(-n for n in c[1].cuda.numbers)))
    _, best, tier = candidates[0]
    for _, variant, other_tier in candidates[1:]:
        if other_tier != tier:
            reason = _driver_reason(other_tier, host.support(variant.cuda), variant)
        else:
            reason = f"older CUDA than {best.name}"
        rejected.append(Rejection(variant.name, reason))
    rejected.sort(key=lambda r: offered.index(r.variant) if r.variant in offered else 99)
    covers = " whose wheels carry code for every GPU here" if host.gpus_in_scope else ""
    if tier == "full":
        why = f"the newest CUDA variant of PyTorch {release.version}{covers} that the driver supports fully"
    elif tier == "minor-compat":
        why = (
            f"no variant of PyTorch {release.version}{covers} is fully supported by this driver; "
            f"{best.name} runs under CUDA minor-version compatibility"
        )
    else:
        support = host.support(best.cuda)
        why = (
            f"the newest CUDA variant of PyTorch {release.version}{covers}; the driver is not known here: "
            f"{best.name} needs >= {support.compat_min or support.full_min}"
        )
        if support.full_min and support.compat_min and support.full_min != support.compat_min:
            why += f" (>= {support.full_min} for full CUDA {best.cuda.major_minor} support)"
    return Recommendation(
        torch=release.version,
        family=family.name,
        variant=best.name,
        cuda=str(best.cuda.major_minor),
        image=family.reference(release, best),
        support=tier,
        why=why,
        wheel_index_url=table.wheel_index_url(best.name),
        rejected=tuple(rejected),
    )


def _fixes(host: HostView, family: ImageFamily, release: PytorchRelease, other_releases: bool) -> Fixes:
    """The smallest driver upgrade that would make a variant of this release fit, and the other
    release that fits now: worded, as data, and that release's recommendation."""
    words: list[str] = []
    actions: list[Action] = []
    upgrades = []
    for name in family.variants_for(release):
        variant = release.variant(name)
        if variant is None or not _covers_gpus(host, variant):
            continue
        support = host.support(variant.cuda)
        if support.tier == "too-old":
            floor = support.compat_min or support.full_min
            if floor is not None:
                upgrades.append((floor, variant, support))
    if upgrades:
        floor, variant, support = min(upgrades, key=lambda u: u[0])
        text = f"upgrade the NVIDIA driver to >= {floor} to run {variant.name}"
        if support.full_min and support.full_min != floor:
            text += f" (>= {support.full_min} for full CUDA {variant.cuda.major_minor} support)"
        words.append(text)
        actions.append(
            Action(
                "upgrade-driver",
                min_driver=str(floor),
                full_driver=str(support.full_min) if support.full_min is not None else None,
                torch=release.version,
                variant=variant.name,
                cuda=str(variant.cuda.major_minor),
                support="full" if floor == support.full_min else "minor-compat",
                image=family.reference(release, variant),
                wheel_index_url=host.table.wheel_index_url(variant.name),
            )
        )
    alternative = None
    if other_releases:
        more_words, more_actions, alternative = _other_releases(host, family, release)
        words.extend(more_words)
        actions.extend(more_actions)
    return words, actions, alternative


def _other_releases(host: HostView, family: ImageFamily, release: PytorchRelease) -> Fixes:
    """The newest other release of this family that fits the host as it is."""
    for other in sorted(host.table.pytorch_releases, key=lambda r: r.key, reverse=True):
        if other.version == release.version:
            continue
        if not any(_fits(host, other.variant(name)) for name in family.variants_for(other)):
            continue
        result = recommend(host, other, family, suggest_other_releases=False)
        if result.found:
            action = Action(
                "use-release",
                torch=other.version,
                variant=result.variant,
                cuda=result.cuda,
                image=result.image,
                support=result.support,
                wheel_index_url=result.wheel_index_url,
            )
            return [f"use PyTorch {other.version} ({result.image}), which fits this host"], [action], result
    return _NO_FIXES


def first_fit(
    host: HostView, releases: Sequence[PytorchRelease]
) -> Optional[tuple[PytorchRelease, Recommendation]]:
    """The first of ``releases`` (each once) with a variant that fits the host, and that recommendation."""
    seen: set[str] = set()
    for release in releases:
        if release.version in seen:
            continue
        seen.add(release.version)
        rec = recommend(host, release, suggest_other_releases=False)
        if rec.found:
            return release, rec
    return None
