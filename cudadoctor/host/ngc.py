"""How this host runs an NGC PyTorch container release: natively, through CUDA forward
compatibility (data-center GPUs on the supported driver branches only), through minor-version
compatibility, or not at all, and why. Pure.

NGC containers ship NVIDIA's cuda-compat libraries (their LD_LIBRARY_PATH starts with
/usr/local/cuda/compat/lib), so an older data-center driver branch in NVIDIA's forward-compatibility
matrix runs a newer container CUDA; a GeForce card does not (CUDA error 804).
"""

from __future__ import annotations

from ..compat.ngc import NgcRelease
from ..compat.table import ToolkitArchitectures, WheelVariant
from ..model.facts import GpuFacts
from ..model.record import record
from ..model.versions import ComputeCapability, CudaVersion
from .view import FULL, MINOR_COMPAT, UNKNOWN, HostView, gpu_label

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

NATIVE = "native"
FORWARD_COMPAT = "forward-compat"
MINOR = "minor-compat"
NO = "no"
NOT_KNOWN = "unknown"  # the table does not record the release's CUDA, or the driver is unknown


@record
class NgcFit:
    """One release against this host: how it runs (``mode``) and the sentence that says why."""

    release: NgcRelease
    mode: str  # native | forward-compat | minor-compat | no | unknown
    why: str
    forward_compat_barred: bool = False  # it would need forward compatibility, which these GPUs cannot use
    gpu_blocked: bool = False  # its CUDA or arch list cannot serve (or is not known to serve) a GPU in scope: no driver helps

    @property
    def runs(self) -> bool:
        return self.mode in (NATIVE, FORWARD_COMPAT, MINOR)


def arch_variant(cuda: CudaVersion, arch_list: tuple[str, ...], source: str) -> WheelVariant:
    """TORCH_CUDA_ARCH_LIST as a build the GPU rules can judge: "9.0+PTX" is SASS and PTX for 9.0."""
    sass = tuple(ComputeCapability.parse(w.split("+", 1)[0]) for w in arch_list)
    ptx = tuple(ComputeCapability.parse(w.split("+", 1)[0]) for w in arch_list if w.endswith("+PTX"))
    return WheelVariant(
        name=f"cu{cuda.major}{cuda.minor}",
        cuda=cuda.major_minor,
        arch_list=sass,
        ptx=ptx,
        cudnn=None,
        evidence="image-env",
        source=source,
    )


def forward_compat_blockers(host: HostView, gpus: tuple[GpuFacts, ...]) -> list[GpuFacts]:
    """The GPUs in scope that cannot use forward compatibility: a known class outside NVIDIA's list
    (GeForce/consumer, workstation RTX other than the NGC-ready SKUs)."""
    forward = host.table.forward_compat
    if forward is None:
        return list(gpus)
    blocked = []
    for gpu in gpus:
        model = host.model(gpu)
        if model is not None and model.brand_class not in forward.brand_classes:
            blocked.append(gpu)
    return blocked


def toolkit_row(host: HostView, cuda: CudaVersion) -> tuple[Optional[ToolkitArchitectures], bool]:
    """The toolkit row that says which GPUs ``cuda`` builds for, and whether it is the exact minor.
    With no row for the minor, the nearest lower row of the same major stands in: its oldest
    compute capability is a floor (a CUDA major drops architectures, its minors do not bring them
    back), but its newest is not a ceiling (a later minor may add architectures)."""
    exact = host.table.toolkit_architectures_for(cuda)
    if exact is not None:
        return exact, True
    lower = [
        row for row in host.table.toolkit_architectures
        if row.cuda.major == cuda.major and row.cuda.minor < cuda.minor
    ]
    return (max(lower, key=lambda row: row.cuda.minor), False) if lower else (None, False)


def gpu_verdict(host: HostView, release: NgcRelease, cuda: CudaVersion) -> Optional[tuple[str, str]]:
    """(NO or NOT_KNOWN, why) when the release's CUDA (or its arch list) cannot serve, or cannot be
    shown to serve, a GPU in scope; None when it serves every GPU whose compute capability is known.
    An unknown is never counted as a fit."""
    toolkit, exact = toolkit_row(host, cuda)
    variant = arch_variant(cuda, release.arch_list, release.source) if release.arch_list else None
    for gpu in host.gpus_in_scope:
        cc = host.cc(gpu)
        if cc is None:
            continue
        covered = variant is not None and variant.coverage(cc) is not None
        if toolkit is None:
            if not covered:
                return NOT_KNOWN, f"the table does not record which GPUs CUDA {cuda.major_minor} builds for ({gpu_label(gpu)}, {cc.sm})"
        elif exact and not toolkit.supports(cc):
            return NO, f"CUDA {cuda.major_minor} cannot build for {gpu_label(gpu)}, {cc.sm} (it supports {toolkit.min_cc.sm} to {toolkit.max_cc.sm})"
        elif not exact and cc < toolkit.min_cc:
            return NO, (
                f"CUDA {cuda.major_minor} cannot build for {gpu_label(gpu)}, {cc.sm}: the table has no CUDA {cuda.major_minor} "
                f"row, and CUDA {toolkit.cuda.major_minor}, the nearest earlier {cuda.major}.x, already starts at {toolkit.min_cc.sm}"
            )
        elif not exact and cc > toolkit.max_cc and not covered:
            return NOT_KNOWN, (
                f"the table has no CUDA {cuda.major_minor} row, and CUDA {toolkit.cuda.major_minor}, the nearest earlier "
                f"{cuda.major}.x, stops at {toolkit.max_cc.sm}: whether it builds for {gpu_label(gpu)}, {cc.sm} is not known"
            )
        if variant is not None and not covered:
            return NO, f"its TORCH_CUDA_ARCH_LIST ({' '.join(release.arch_list or ())}) has no code for {gpu_label(gpu)}, {cc.sm}"
    return None


def ngc_fit(host: HostView, release: NgcRelease, today: Optional[str] = None, live_only: bool = False) -> NgcFit:
    """How this host runs the release; the sentence names the driver, the CUDA and the rule. With
    ``live_only`` (what the recommender offers), forward compatibility counts only on a branch live
    on the run's date (``today``, else the snapshot's or the table's: CompatTable.reference_date);
    an image already chosen is judged on the matrix alone."""
    cuda = release.cuda
    if cuda is None:
        return NgcFit(release, NOT_KNOWN, f"the table does not record the CUDA of release {release.release}")
    problem = gpu_verdict(host, release, cuda)
    if problem is not None:
        return NgcFit(release, problem[0], problem[1], gpu_blocked=True)
    support = host.support(cuda)
    driver = host.driver
    if support.tier == FULL:
        shown = f"driver {driver}" if driver is not None else "the driver"
        return NgcFit(release, NATIVE, f"{shown} supports CUDA {cuda.major_minor} fully")
    if support.tier == UNKNOWN or driver is None:
        return NgcFit(release, NOT_KNOWN, "the driver version is not known")
    branches = release.forward_compat_branches
    if branches is None:
        branches = host.table.compat_branches_for(cuda) or ()
    need = f"CUDA {cuda.major_minor} needs driver >= {support.full_min}" if support.full_min else f"CUDA {cuda.major_minor} is newer than driver {driver}"
    blocked = forward_compat_blockers(host, host.gpus_in_scope)
    names = ", ".join(_class_label(host, g) for g in blocked)
    forward = host.table.forward_compat
    if driver.branch in branches:
        if not blocked and live_only and forward is not None and forward.branch(driver.branch) is not None \
                and not forward.live(driver.branch, host.table.reference_date(today, host.facts.probed_at)):
            row = forward.branch(driver.branch)
            dead = (f"{need}; driver branch R{driver.branch} is no live branch ({row.lifecycle() if row is not None else ''}): "
                    "NVIDIA supports forward compatibility only on live branches")
            if support.tier == MINOR_COMPAT:
                return NgcFit(release, MINOR, dead + f"; driver {driver} runs it under CUDA minor-version compatibility instead")
            return NgcFit(release, NO, dead)
        if not blocked:
            return NgcFit(
                release,
                FORWARD_COMPAT,
                f"{need}; driver branch R{driver.branch} runs it through CUDA forward compatibility "
                "(the container's cuda-compat libraries), which data-center GPUs support",
            )
        barred = (
            f"{need}; R{driver.branch} would run it through forward compatibility, which does not apply to {names}: "
            "only data-center GPUs (and select NGC-ready RTX cards) can use it"
        )
        if support.tier == MINOR_COMPAT:
            return NgcFit(release, MINOR, barred + "; it runs under CUDA minor-version compatibility instead", True)
        return NgcFit(release, NO, barred, True)
    if support.tier == MINOR_COMPAT:
        return NgcFit(release, MINOR, f"{need}; driver {driver} runs it under CUDA minor-version compatibility")
    listed = ", ".join(f"R{b}" for b in branches) or "none"
    why = f"{need}; driver branch R{driver.branch} is not one that runs it through forward compatibility ({listed})"
    if blocked:
        why += f", and forward compatibility does not apply to {names} on any branch"
    return NgcFit(release, NO, why, bool(blocked))


def _class_label(host: HostView, gpu: GpuFacts) -> str:
    model = host.model(gpu)
    kind = f"a {model.brand_class} GPU" if model is not None else "a GPU of unknown class"
    return f"GPU {gpu.index} ({gpu.name or 'unknown model'}, {kind})"


def older_month_for_gpus(host: HostView, release: NgcRelease) -> Optional[NgcRelease]:
    """The month nearest ``release`` whose CUDA (and arch list) serves every GPU in scope: the
    newest older one (a CUDA that dropped an old GPU), else the oldest newer one (a GPU newer
    than the month's CUDA); months whose CUDA NVIDIA's release notes print come first, as in the
    recommendation. Compare ``.key`` with ``release.key`` to tell which way it lies."""
    def first_serving(months: list[NgcRelease]) -> Optional[NgcRelease]:
        for candidate in [r for r in months if r.settled] + [r for r in months if not r.settled]:
            assert candidate.cuda is not None
            if gpu_verdict(host, candidate, candidate.cuda) is None:
                return candidate
        return None

    known = [r for r in host.table.ngc_releases if r.cuda is not None]
    older = first_serving([r for r in reversed(known) if r.key < release.key])
    return older or first_serving([r for r in known if r.key > release.key])
