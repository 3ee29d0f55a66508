"""Pick the CUDA variant (and image tag) that fits this host, and say why the others lost.

Policy: among the variants the image family offers for the release, keep those whose builds
carry code for every GPU in scope and whose toolkit supports each GPU. Prefer the ones the driver
supports fully (Table 3 minimum), then those that run under minor-version compatibility; within
a tier the newest CUDA wins. Pure: the host view (facts and table) in, a Recommendation out.
"""

from __future__ import annotations

from .compat.table import CompatTable, ImageFamily, PytorchRelease, WheelVariant, platform_label
from .host.view import TOO_OLD, DriverSupport, HostView, full_support_clause, gpus_label
from .model.facts import GpuFacts
from .model.findings import Action
from .model.record import field, record, replace
from .model.versions import ComputeCapability, DriverVersion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterator, Optional, Sequence

TIER_RANK = {"full": 0, "forward-compat": 1, "minor-compat": 2, "unknown": 3}
FORWARD_COMPAT = "forward-compat"  # full support only through a cuda-compat libcuda in effect (HostView.support)


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
    # How the chosen build's arch list is known (compat.table.EVIDENCE_LEVELS), for this host's platform.
    evidence: Optional[str] = None
    platform: Optional[str] = None  # the host platform the choice was made for (None: unknown)
    install_version: Optional[str] = None  # the patch release to install: the first that has the variant, else the newest
    # How PyTorch's pages install this release's wheels (compat.install.INSTALL_STYLES), the find-links
    # page that form names (1.0-1.10), and whether the variant is PyPI's plain torch wheel of the release.
    install_style: str = "index-url"
    wheel_page_url: Optional[str] = None
    plain_wheel: bool = False
    first_patch: Optional[str] = None  # set when the variant is missing from the minor's earlier patch releases
    # The release's variants nothing settles (never offered) and those inferred by `table update`.
    unverified: tuple[str, ...] = ()
    inferred: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # what the choice relies on that is less than a read binary
    caveats: tuple[str, ...] = ()  # of the notes, those that may change the answer (the report's default view shows these)
    actions: tuple[Action, ...] = ()  # the fixes as data, in the same order
    alternative: Optional["Recommendation"] = None  # the other release that fits as the host is, if any
    # Set when this is the newest release that runs here, chosen because nothing was asked for and the
    # newest release does not: that release's own (no-fit) recommendation, with the fixes that would run it.
    newest: Optional["Recommendation"] = None
    # On the newest release's own recommendation, when no driver runs it on these GPUs: the upgrade
    # that runs the newest release that does have a build for them (newer than the one chosen).
    reachable: Optional[Action] = None

    @property
    def found(self) -> bool:
        return self.variant is not None

    def needs(self) -> tuple[str, Optional[Action]]:
        """What this release needs when it does not fit, in words ("needs driver >= X"), and the
        driver upgrade that would make it fit (None: none would; its builds carry no code for these GPUs)."""
        upgrade = next((a for a in self.actions if a.action == "upgrade-driver" and a.min_driver), None)
        if upgrade is None:
            return "has no build for these GPUs", None
        return f"needs driver >= {upgrade.min_driver}", upgrade


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
    if _covers_gpus(host, variant):
        return []  # decided per distinct compute capability, without walking every GPU
    problems = []
    toolkit = host.table.toolkit_architectures_for(variant.cuda)
    # Identical GPUs blocked the same way are one reason ("GPUs 0-7 (Tesla K80)"), not eight.
    alike: dict[tuple[Optional[str], str, str], list[GpuFacts]] = {}
    for gpu, cc, verdict in _blocked_gpus(host, variant):
        alike.setdefault((gpu.name, cc.sm, verdict), []).append(gpu)
    for (_, sm, verdict), gpus in alike.items():
        who = gpus_label(gpus)
        if verdict == "toolkit" and toolkit is not None:
            problems.append(
                f"CUDA {variant.cuda.major_minor} cannot build for {who}, {sm} "
                f"(it supports {toolkit.min_cc.sm} to {toolkit.max_cc.sm})"
            )
        elif verdict == "not-built":
            problems.append(f"its wheels carry no code for {who}, {sm} (built for {variant.arch_summary()})")
        elif verdict == "ptx-minor-compat":
            problems.append(
                f"its wheels carry only PTX for {who}, {sm}, which this driver cannot JIT-compile "
                "under minor-version compatibility"
            )
    return problems


def _covers_gpus(host: HostView, variant: WheelVariant) -> bool:
    """The variant runs on every GPU in scope (what _gpu_blockers says, without building its text):
    asked once per distinct compute capability, as _blocked_gpus judges each GPU by its own."""
    return host.covers(variant)


def fit_tier(host: HostView, release: PytorchRelease, name: str) -> Optional[str]:
    """How the variant runs on this host as far as the build decides it ("full", "minor-compat",
    "unknown"), or None when it does not (not built for this platform, no code for a GPU, driver
    too old). The fleet counts coverage with this; the host's other failures are the check's."""
    variant, _ = _platform_variant(host, release, name)
    if variant is None or not _covers_gpus(host, variant):
        return None
    tier = host.support(variant.cuda).tier
    return None if tier == TOO_OLD else tier


def build_fix(host: HostView, release: PytorchRelease, name: str) -> tuple[str, str]:
    """(what would let this host run the variant, in words; the finding code that says why it does
    not), for a host a fleet-wide build leaves out."""
    variant, unavailable = _platform_variant(host, release, name)
    if variant is None:
        # Not published for this platform, its build here not on record, or unverified: not counted.
        return f"PyTorch {release.version} {name}: {unavailable or 'not recorded in the table'}; it is not counted as running here", "gpu-arch-unrecorded"
    blocked = {(gpu.name or "unknown model", cc.sm, why) for gpu, cc, why in _blocked_gpus(host, variant)}
    if blocked:
        words = {"toolkit": f"CUDA {variant.cuda.major_minor} cannot build for it", "not-built": "its wheels carry no code for it",
                 "ptx-minor-compat": "only PTX, which this driver cannot JIT-compile"}
        what = "; ".join(f"{gpu} ({sm}): {words.get(why, why)}" for gpu, sm, why in sorted(blocked))
        return f"no driver makes PyTorch {release.version} {name} run on {what}", "gpu-arch-not-built"
    support = host.support(variant.cuda)
    floor = support.compat_min or support.full_min
    ceiling = host.driver_ceiling()
    if support.tier == TOO_OLD and floor is not None and ceiling is not None and host.past_ceiling(floor):
        return f"no driver these GPUs can run makes PyTorch {release.version} {name} run: it needs >= {floor}, and {ceiling.words()}", "driver-too-old"
    if support.tier == TOO_OLD and floor is not None:
        return f"upgrade the NVIDIA driver to >= {floor} to run {name}", "driver-too-old"
    return f"PyTorch {release.version} {name}: no driver row in the table says which driver runs it", "driver-too-old"


def _fits(host: HostView, variant: Optional[WheelVariant]) -> bool:
    # The driver first: its answer is kept per CUDA minor, which many variants share, so an old
    # driver rules most of them out without their coverage being worked out.
    return variant is not None and host.support(variant.cuda).tier != TOO_OLD and _covers_gpus(host, variant)


def _driver_reason(tier: str, support: DriverSupport, variant: WheelVariant, host: Optional[HostView] = None) -> str:
    driver = support.driver or "this driver"
    ceiling = host.driver_ceiling() if host is not None else None
    if tier == "too-old":
        floor = support.compat_min or support.full_min
        reason = f"needs driver >= {floor} (CUDA {variant.cuda.major_minor}); driver {driver} is older"
        if ceiling is not None and host is not None and host.past_ceiling(floor):
            reason += f", and {ceiling.words()}"
        return reason
    if tier == "minor-compat":
        if support.full_min is None:  # a CUDA newer than the table's driver rows (a `table update` release)
            return (f"runs only under minor-version compatibility (CUDA {variant.cuda.major_minor} has no driver row "
                    "in the table, so no driver is known to support it fully)")
        past = f", past R{ceiling.branch}, the last driver branch for {ceiling.gpus}" if (
            ceiling is not None and host is not None and host.past_ceiling(support.full_min)) else ""
        return f"runs only under minor-version compatibility (full support needs driver >= {support.full_min}{past})"
    if tier == "forward-compat":
        return f"runs only through CUDA forward compatibility (the driver alone needs >= {support.full_min})"
    return ""


if TYPE_CHECKING:
    Fixes = tuple[list[str], list[Action], Optional[Recommendation]]
_NO_FIXES: Fixes = ([], [], None)


def _no_fit(
    release: PytorchRelease,
    family: ImageFamily,
    why: str,
    rejected: Sequence[Rejection] = (),
    fixes: Fixes = _NO_FIXES,
    platform: Optional[str] = None,
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
        platform=platform,
        unverified=release.unverified_variants,
        inferred=release.inferred_variants,
        notes=tuple(_release_notes(release)),
    )


def _release_notes(release: PytorchRelease) -> list[str]:
    """What the table does not settle about this release, said wherever a verdict relies on it."""
    notes = []
    if release.unverified_variants:
        notes.append(f"PyTorch {release.version}: {', '.join(release.unverified_variants)} never offered (no source settles its GPU code)")
    if not release.variants_complete:
        notes.append(f"PyTorch {release.version}: the table records only some of its variants")
    return notes


def _variant_notes(table: CompatTable, release: PytorchRelease, variant: WheelVariant) -> tuple[list[str], list[str]]:
    """(every note on the chosen variant, the caveats among them: what may make the answer wrong)."""
    notes, caveats = [], []
    if variant.seen_on:
        caveats.append(f"PyTorch {release.version} {variant.name} is not in the shipped table: it comes from {variant.seen_on} "
                       "(`cudadoctor table update`)")
    if variant.evidence == "inferred":
        caveats.append(
            f"{variant.name}'s arch list is inferred from PyTorch {variant.inferred_from} (`table update` saw the wheels; no source describes them)"
        )
    elif variant.evidence == "third-party":
        caveats.append(f"{variant.name}'s arch list rests on third-party evidence, not a read binary")
    elif variant.evidence in ("release-matrix", "build-script"):
        notes.append(f"{variant.name}'s arch list rests on {variant.evidence} evidence, not a read binary")
    if table.min_driver_full(variant.cuda) is None:
        floor = table.minor_compat_floor(variant.cuda.major)
        if floor is not None:
            caveats.append(
                f"CUDA {variant.cuda.major_minor} has no driver row in the table: judged by the {variant.cuda.major}.x floor ({floor.min_driver_linux})"
            )
    if variant.first_patch:
        notes.append(f"{variant.name} exists from PyTorch {variant.first_patch} on (not in {release.version}.0)")
    return caveats + notes, caveats


def _platform_variant(host: HostView, release: PytorchRelease, name: str) -> tuple[Optional[WheelVariant], str]:
    """The variant as built for the host's platform, or None and why it is not offered here:
    the table's answer, worked out once per (release, variant, platform)."""
    memo = host.table.memo("platform-variant")
    key = (id(release), name, host.platform)
    known = memo.get(key)
    if known is None or known[0] is not release:
        known = memo[key] = (release, _platform_variant_of(host.platform, release, name))
    return known[1]


if TYPE_CHECKING:
    Build = tuple[str, Optional[WheelVariant], str]  # (variant name, its build for the platform or None, why it is not offered)


def _offered_builds(host: HostView, release: PytorchRelease, family: ImageFamily, images: bool) -> tuple[Build, ...]:
    """The variants a recommendation chooses from (``considered``), each as built for the host's
    platform: the table's answer, worked out once per (release, family, platform), so that the
    recommender's loops over them look nothing up per variant."""
    memo = host.table.memo("offered-builds")
    key = (id(release), id(family), images, host.platform)
    known = memo.get(key)
    if known is None or known[0] is not release or known[1] is not family:
        builds = tuple((name,) + _platform_variant(host, release, name) for name in considered(release, family, images))
        known = memo[key] = (release, family, builds)
    return known[2]


def _platform_variant_of(platform: Optional[str], release: PytorchRelease, name: str) -> tuple[Optional[WheelVariant], str]:
    variant = release.variant(name)
    if variant is None:
        return None, ""
    if not variant.available_on(platform):
        where = platform_label(platform) if platform else "this platform"
        return None, f"published for {variant.platform_summary()} only, not {where}"
    built = variant.on_record_for(platform)
    if built is None:  # Linux aarch64, and only the x86_64 wheels' arch list is on record
        return None, f"no {platform_label(platform or '')} build of it is on record (its arch list is the x86_64 wheels')"
    if not built.verified:
        return None, "no source settles which GPUs its wheels carry code for (unverified)"
    return built, ""


CPU_VARIANT = "cpu"  # the wheel index's directory of CPU-only builds


def nothing_to_run_on(host: HostView) -> bool:
    """Neither a driver nor a GPU is known, and none was planned (--driver/--gpu): no CUDA build
    can be named for this host, whatever the release."""
    return not host.planned and host.driver is None and not host.gpus


def no_gpu_in_scope(host: HostView) -> bool:
    """The driver answers but CUDA would see no GPU (none attached, or CUDA_VISIBLE_DEVICES hides
    them all): no CUDA build runs here, whatever the release."""
    return host.nvml_ok and host.facts.driver.source == "nvml" and not host.gpus_in_scope


def _no_driver(host: HostView, release: PytorchRelease, family: ImageFamily) -> Recommendation:
    """No fit on a host without an NVIDIA driver or GPU. With no driver installed: what the release's
    build would need, how to plan for another machine, and where the CPU-only wheels are; with a
    driver NVML cannot read (a version mismatch, a hang), only why: its own fix comes first."""
    from .model.facts import NVML_DRIVER_NOT_LOADED, NVML_LIBRARY_MISSING

    state = host.facts.driver.nvml_state
    if state not in (NVML_LIBRARY_MISSING, NVML_DRIVER_NOT_LOADED):
        why = f"NVML could not be read ({state}), so neither the driver nor a GPU is known here: fix that first"
        return _no_fit(release, family, why, platform=host.platform)
    why = "no NVIDIA driver was found on this host, so no CUDA build can run here"
    words: list[str] = []
    actions: list[Action] = []
    newest = release
    variant = newest.variant(newest.default_variant or "") or (newest.variants[-1] if newest.variants else None)
    if variant is not None:
        full = host.table.min_driver_full(variant.cuda)
        floor = host.table.minor_compat_floor(variant.cuda.major)
        least = floor.min_driver_linux if floor is not None else (full.min_driver_linux if full is not None else None)
        if least is not None:
            text = f"PyTorch {newest.version}'s default build ({variant.name}) needs an NVIDIA driver >= {least}"
            if full is not None and full.min_driver_linux != least:
                text += f" (>= {full.min_driver_linux} for full CUDA {variant.cuda.major_minor} support)"
            words.append(text)
            actions.append(Action(
                "install-driver", min_driver=str(least), full_driver=str(full.min_driver_linux) if full is not None else None,
                torch=newest.version, variant=variant.name, cuda=str(variant.cuda.major_minor),
            ))
    words.append("to plan for another machine, give its driver and GPU: --driver VERSION --gpu MODEL")
    actions.append(Action("plan-with-what-if"))
    cpu = host.table.wheel_index_url(CPU_VARIANT)
    words.append(f"for CPU only: pip install 'torch=={newest.version}.*' --index-url {cpu}")
    actions.append(Action("use-cpu-wheels", torch=newest.version, variant=CPU_VARIANT, wheel_index_url=cpu))
    return _no_fit(release, family, why, fixes=(words, actions, None), platform=host.platform)


def newest_fit(
    host: HostView, family: ImageFamily, images: bool = True
) -> tuple[Recommendation, Optional[Recommendation]]:
    """The target when none was asked for: (the recommendation for the newest release with a
    variant, or for ``images`` an image, that runs on this host; the newest release's own
    recommendation when that is an older one, so the report can say what the newest needs).
    When no release runs here, the newest release's recommendation, with its fixes."""
    releases = host.table.releases_newest_first
    newest = host.table.default_release
    first = recommend(host, newest, family, suggest_other_releases=False, images=images)
    if first.found or nothing_to_run_on(host):
        return first, None
    for release in releases:
        if release.key >= newest.key or not _release_fits(host, release, family, images):
            continue  # its recommendation, worded in full, would not be found (recommend's own test, without the words)
        rec = recommend(host, release, family, suggest_other_releases=False, images=images)
        if rec.found:
            if first.needs()[1] is None:  # no driver runs the newest here: say which newer release one would
                first = replace(first, reachable=_newest_reachable(host, family, images, releases, release))
            return replace(rec, newest=first), first
    fallback = recommend(host, newest, family, images=images)
    smallest = _smallest_upgrade(host, family, images, releases)
    if smallest is None or any(a.action == "upgrade-driver" and a.min_driver == smallest[1].min_driver for a in fallback.actions):
        return fallback, None
    # No release runs as the host is: the smallest driver upgrade that runs one leads the fixes.
    words, action = smallest
    return replace(fallback, fixes=(words,) + fallback.fixes, actions=(action,) + fallback.actions), None


Upgrade = tuple[DriverVersion, WheelVariant, DriverSupport]  # (the driver floor, the variant it runs, its support)


def _smallest_release_upgrade(host: HostView, release: PytorchRelease, family: ImageFamily, images: bool) -> Optional[Upgrade]:
    """The lowest driver floor at which a variant of ``release`` covering these GPUs would run here,
    with that variant; None when no driver upgrade makes one run."""
    upgrades: list[Upgrade] = []
    for _, variant, _ in _offered_builds(host, release, family, images):
        if variant is None or not _covers_gpus(host, variant):
            continue
        support = host.support(variant.cuda)
        floor = support.compat_min or support.full_min
        # A floor past the last driver branch these GPUs can run is no upgrade (a K80 stops at R470).
        if support.tier == TOO_OLD and floor is not None and not host.past_ceiling(floor):
            upgrades.append((floor, variant, support))
    return min(upgrades, key=lambda u: u[0]) if upgrades else None


def past_last_branch(host: HostView, release: PytorchRelease) -> Optional[str]:
    """Why no driver upgrade runs ``release`` here although a build of it carries code for these GPUs:
    every such build needs a driver past the last branch they can run (None: that is not the reason)."""
    ceiling = host.driver_ceiling()
    if ceiling is None:
        return None
    floors = []
    for entry in release.variants:
        variant, _ = _platform_variant(host, release, entry.name)
        if variant is None or not _covers_gpus(host, variant):
            continue
        support = host.support(variant.cuda)
        floor = support.compat_min or support.full_min
        if support.tier != TOO_OLD or floor is None or not host.past_ceiling(floor):
            return None  # this build runs, or an upgrade within the branch runs it
        floors.append((floor, variant.name))
    if not floors:
        return None
    floor, name = min(floors)
    return f"PyTorch {release.version}'s builds for these GPUs need driver >= {floor} ({name}), and {ceiling.words()}"


def _documented_pip(table: CompatTable, release: PytorchRelease, variant: Optional[WheelVariant]) -> Optional[str]:
    """The pip line for a release documented in another form than --index-url (1.0-1.13); None for the
    index-url releases, whose line the renderers write from torch and wheel_index_url."""
    if variant is None or release.install_style == "index-url":
        return None
    return table.install_command(release, variant)


def release_upgrade(host: HostView, release: PytorchRelease, family: ImageFamily, images: bool = False) -> Optional[Action]:
    """The smallest driver upgrade that runs a build of ``release`` covering these GPUs, as data
    (the fleet's upgrade plan asks this of each group); None when no driver upgrade makes one run."""
    upgrade = _smallest_release_upgrade(host, release, family, images)
    return _upgrade_action(host, family, release, upgrade) if upgrade is not None else None


def _upgrade_action(host: HostView, family: ImageFamily, release: PytorchRelease, upgrade: Upgrade) -> Action:
    """An upgrade as data: the driver floor, the build it runs, and the support that build then gets."""
    floor, variant, support = upgrade
    # Full support from a driver past the GPUs' last branch is out of reach: the build runs only
    # under minor-version compatibility there, and no full driver is named.
    full = support.full_min if support.full_min is not None and not host.past_ceiling(support.full_min) else None
    build = _build_facts(host.table, family, release, variant)
    return Action(
        "upgrade-driver", min_driver=str(floor), full_driver=str(full) if full is not None else None,
        torch=release.version, variant=variant.name, cuda=str(variant.cuda.major_minor),
        support="full" if floor == support.full_min else "minor-compat",
        image=build["image"], wheel_index_url=build["wheel_index_url"],
        pip_command=_documented_pip(host.table, release, variant),
    )


def _newest_reachable(
    host: HostView, family: ImageFamily, images: bool, releases: Sequence[PytorchRelease], above: PytorchRelease
) -> Optional[Action]:
    """The driver upgrade that runs the newest release newer than ``above`` with a build for these
    GPUs (its smallest floor), or None when none has one."""
    for release in releases:  # newest first
        if release.key <= above.key:
            return None
        upgrade = _smallest_release_upgrade(host, release, family, images)
        if upgrade is not None:
            return _upgrade_action(host, family, release, upgrade)
    return None


def _smallest_upgrade(
    host: HostView, family: ImageFamily, images: bool, releases: Sequence[PytorchRelease]
) -> Optional[tuple[str, Action]]:
    """The lowest driver floor at which some release's variant would run on these GPUs (the newest
    release at that floor), worded and as data; None when no driver makes any run."""
    best: Optional[tuple[PytorchRelease, Upgrade]] = None
    for release in releases:  # newest first: an equal floor keeps the newer release
        upgrade = _smallest_release_upgrade(host, release, family, images)
        if upgrade is not None and (best is None or upgrade[0] < best[1][0]):
            best = (release, upgrade)
    if best is None:
        return None
    release, upgrade = best
    words = f"upgrade the NVIDIA driver to >= {upgrade[0]} to run PyTorch {release.version} {upgrade[1].name}, the smallest upgrade that runs a release here"
    return words, _upgrade_action(host, family, release, upgrade)


def considered(release: PytorchRelease, family: ImageFamily, images: bool) -> tuple[str, ...]:
    """The variants a recommendation chooses from: the family's images of the release (``images``),
    else every wheel variant the release publishes (an image is then named where the family has one)."""
    return family.variants_for(release) if images else release.variant_names


def recommend(
    host: HostView,
    release: Optional[PytorchRelease] = None,
    family: Optional[ImageFamily] = None,
    suggest_other_releases: bool = True,
    images: bool = True,
) -> Recommendation:
    table = host.table
    release = release or table.default_release
    family = family or table.image_families[0]
    offered = considered(release, family, images)
    if nothing_to_run_on(host):
        return _no_driver(host, release, family)
    if no_gpu_in_scope(host):
        # A driver with no visible GPU runs no CUDA build at all; recommending one would mislead.
        return _no_fit(
            release,
            family,
            "the driver answers but no GPU is visible to CUDA here",
            fixes=(["make a GPU visible to CUDA (`nvidia-smi` lists none; in a container, start the container with `docker run --gpus all IMAGE`), "
                    "then run cudadoctor again"], [Action("make-gpu-visible")], None),
        )
    candidates: list[tuple[int, WheelVariant, str]] = []
    rejected: list[Rejection] = []
    for name, variant, unavailable in _offered_builds(host, release, family, images):
        if variant is None:
            if unavailable:
                rejected.append(Rejection(name, unavailable))
            continue
        blockers = _gpu_blockers(host, variant)
        support = host.support(variant.cuda)
        if blockers:
            rejected.append(Rejection(name, "; ".join(blockers)))
            continue
        if support.tier == "too-old":
            rejected.append(Rejection(name, _driver_reason("too-old", support, variant, host)))
            continue
        tier = FORWARD_COMPAT if support.forward_compat else support.tier
        candidates.append((TIER_RANK[tier], variant, tier))
    if not offered:
        return _no_fit(
            release,
            family,
            f"the {family.name} family offers no image for PyTorch {release.version}",
            fixes=_other_releases(host, family, release, images) if suggest_other_releases else _NO_FIXES,
            platform=host.platform,
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
            _fixes(host, family, release, suggest_other_releases, images),
            platform=host.platform,
        )
    # Best tier first; within it the newest CUDA.
    if len(candidates) > 1:  # (one candidate needs no sort key worked out)
        candidates.sort(key=lambda c: (c[0], tuple(-n for n in c[1].cuda.numbers)))
    _, best, tier = candidates[0]
    for _, variant, other_tier in candidates[1:]:
        if other_tier != tier:
            reason = _driver_reason(other_tier, host.support(variant.cuda), variant, host)
        else:
            reason = f"older CUDA than {best.name}"
        rejected.append(Rejection(variant.name, reason))
    if len(rejected) > 1:
        rejected.sort(key=lambda r: offered.index(r.variant) if r.variant in offered else 99)
    covers = " whose wheels carry code for every GPU here" if host.gpus_in_scope else ""
    if tier == "full":
        why = f"the newest CUDA variant of PyTorch {release.version}{covers} that the driver supports fully"
    elif tier == FORWARD_COMPAT:
        why = (f"the newest CUDA variant of PyTorch {release.version}{covers} that runs here; {best.name} runs through CUDA "
               f"forward compatibility (the cuda-compat libcuda in effect), not on the driver alone")
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
        if support.compat_min:
            why += full_support_clause(host, support, best.cuda, support.compat_min)
    return Recommendation(
        torch=release.version,
        family=family.name,
        variant=best.name,
        cuda=str(best.cuda.major_minor),
        support=tier,
        why=why,
        rejected=tuple(rejected),
        platform=host.platform,
        **_build_facts(table, family, release, best),
    )


def _build_facts(table: CompatTable, family: ImageFamily, release: PytorchRelease, best: WheelVariant) -> dict[str, Any]:
    """What a recommendation of this build says that the table alone decides (its image, where pip
    finds it, its notes), as the Recommendation's fields: worked out once per table, not once per host."""
    memo = table.memo("build-facts")
    key = (id(family), id(release), id(best))  # checked to be the same objects, as the table keeps them
    known = memo.get(key)
    if known is None or known[0] is not family or known[1] is not release or known[2] is not best:
        notes, caveats = _variant_notes(table, release, best)
        facts = dict(
            image=family.reference(release, best) if best.name in family.variants_for(release) else None,
            wheel_index_url=table.index_url_of(best),
            evidence=best.evidence or None,
            install_version=release.install_version(best),
            install_style=release.install_style,
            wheel_page_url=table.wheel_page_url(release, best),
            plain_wheel=best.name == release.default_variant,
            first_patch=best.first_patch,
            unverified=release.unverified_variants,
            inferred=release.inferred_variants,
            notes=tuple(notes + _release_notes(release)),
            caveats=tuple(caveats),
        )
        known = memo[key] = (family, release, best, facts)
    return known[3]


def _fixes(host: HostView, family: ImageFamily, release: PytorchRelease, other_releases: bool, images: bool = True) -> Fixes:
    """The smallest driver upgrade that would make a variant of this release fit, and the other
    release that fits now: worded, as data, and that release's recommendation."""
    words: list[str] = []
    actions: list[Action] = []
    upgrade = _smallest_release_upgrade(host, release, family, images)
    if upgrade is not None:
        floor, variant, support = upgrade
        words.append(f"upgrade the NVIDIA driver to >= {floor} to run {variant.name}" + full_support_clause(host, support, variant.cuda, floor))
        actions.append(_upgrade_action(host, family, release, upgrade))
    alternative = None
    if other_releases:
        more_words, more_actions, alternative = _other_releases(host, family, release, images)
        words.extend(more_words)
        actions.extend(more_actions)
    return words, actions, alternative


def _release_fits(host: HostView, release: PytorchRelease, family: ImageFamily, images: bool) -> bool:
    """Whether ``recommend`` finds a variant of the release for this host (a driver and a GPU in
    scope, and a variant built for the platform that covers every GPU and that the driver runs),
    decided without building the recommendation's words."""
    if nothing_to_run_on(host) or no_gpu_in_scope(host):
        return False
    return any(_fits(host, variant) for _, variant, _ in _offered_builds(host, release, family, images))


def _other_releases(host: HostView, family: ImageFamily, release: PytorchRelease, images: bool = True) -> Fixes:
    """The newest other release of this family that fits the host as it is."""
    for other in host.table.releases_newest_first:
        if other.version == release.version:
            continue
        if not any(_fits(host, variant) for _, variant, _ in _offered_builds(host, other, family, images)):
            continue
        result = recommend(host, other, family, suggest_other_releases=False, images=images)
        if result.found:
            action = Action(
                "use-release",
                torch=other.version,
                variant=result.variant,
                cuda=result.cuda,
                image=result.image,
                support=result.support,
                wheel_index_url=result.wheel_index_url,
                pip_command=_documented_pip(host.table, other, other.variant(result.variant or "")),
            )
            build = result.image or f"{result.variant} wheels"
            return [f"use PyTorch {other.version} ({build}), which fits this host"], [action], result
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
        if not _release_fits(host, release, host.table.image_families[0], False):
            continue
        rec = recommend(host, release, suggest_other_releases=False, images=False)
        if rec.found:
            return release, rec
    return None
