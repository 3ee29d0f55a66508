"""Driver vs an NGC PyTorch container: which monthly release the target is, what the table knows
of it (and how well), and how this host runs it: natively, through the forward compatibility the
container ships (data-center GPUs on the supported branches), or not."""

from __future__ import annotations

from ..compat.ngc import NgcFamily, NgcRelease
from ..host.ngc import FORWARD_COMPAT, NATIVE, NO, NOT_KNOWN, NgcFit, ngc_fit, older_month_for_gpus
from ..host.view import out_of_reach
from ..model.findings import FAIL, INFO, OK, WARN, Finding
from ..model.record import replace
from ..model.versions import CudaVersion
from .context import CheckContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def ngc_target(ctx: CheckContext) -> Optional[tuple[NgcFamily, str, Optional[NgcRelease]]]:
    """(family, YY.MM, the table's entry) when the target is an NGC image; the entry carries the
    CUDA and arch list the target was judged with (the image's own, when read from it)."""
    target = ctx.target
    if target is None or not target.family or not target.image:
        return None
    family = ctx.table.ngc_family(target.family)
    if family is None:
        return None
    month = family.release_in_tag(target.image.rpartition(":")[2].split("@", 1)[0])
    if month is None:
        return None
    entry = ctx.table.ngc_release(month)
    cuda = ctx.target_cuda
    image = target.image_facts
    if cuda is not None and image is not None and image.facts_from == "image-env":  # the image's own environment
        base = entry or NgcRelease(
            release=month, cuda=None, pytorch=None, min_driver=None, forward_compat_branches=None, arch_list=None,
            evidence=(), source=family.source,
        )
        entry = replace(
            base, cuda=cuda, pytorch=image.env_value("PYTORCH_VERSION") or base.pytorch, arch_list=target.arch_list,
            forward_compat_branches=None, min_driver=None,
        )
    return family, month, entry


def ngc_fit_for_target(ctx: CheckContext) -> Optional[NgcFit]:
    found = ngc_target(ctx)
    if found is None or found[2] is None or found[2].cuda is None:
        return None
    return ngc_fit(ctx.host, found[2])


def _evidence(release: NgcRelease, read_from_image: bool) -> str:
    if read_from_image:
        return "CUDA and PyTorch read from the image's environment (CUDA_VERSION, PYTORCH_VERSION)."
    levels = ", ".join(f"{fact} {level}" for fact, level in release.evidence)
    return f"Evidence: {levels}." + (f" {release.note}" if release.note else "")


def check_ngc(ctx: CheckContext) -> list[Finding]:
    found = ngc_target(ctx)
    if found is None:
        return []
    family, month, release = found
    table = ctx.table
    tag = ctx.target.image if ctx.target else month
    if release is None or release.cuda is None:
        return [
            Finding(
                code="ngc-release-unrecorded",
                severity=WARN,
                title=f"The table does not record NGC PyTorch {month}'s CUDA: {tag} cannot be judged from the table",
                detail="No source the table has read settles this month's CUDA, PyTorch build and driver rules "
                    "(docs/table.md lists the months it records and how well).",
                hint=f"Pull the image and check it again (`cudadoctor check --image {tag} --pull`): its environment "
                    "(CUDA_VERSION, PYTORCH_VERSION, TORCH_CUDA_ARCH_LIST) says what it holds. "
                    "`cudadoctor recommend --image --family ngc-pytorch` names a month the table knows.",
                source=table.cite(family.source),
            )
        ]
    image = ctx.target.image_facts if ctx.target else None
    from_image = image is not None and image.facts_from == "image-env"
    fit = ngc_fit(ctx.host, release)
    what = f"NGC PyTorch {month} (CUDA {release.cuda}" + (f", PyTorch {release.pytorch})" if release.pytorch else ")")
    source = table.cite(release.source)
    if fit.mode == NATIVE:
        return [Finding(code="ngc-release-ok", severity=OK, title=f"{what} runs natively: {fit.why}",
                        detail=_evidence(release, from_image), source=source)]
    forward = table.forward_compat
    fc_source = table.cite(forward.source) if forward else source
    if fit.gpu_blocked and fit.mode == NO:
        older = older_month_for_gpus(ctx.host, release)
        if older is not None:
            nearest = "newest older" if older.key < release.key else "oldest newer"
            instead = (
                f"Use NGC PyTorch {older.release} ({family.reference(older)}, CUDA {older.cuda}), the {nearest} month the "
                "table knows whose CUDA builds for these GPUs" + ("" if older.settled else " (its CUDA is unverified in the table)")
            )
        else:
            instead = "Use an NGC month whose CUDA builds for these GPUs (the table records none)"
        return [
            Finding(
                code="ngc-gpu-unsupported",
                severity=FAIL,
                title=f"{what} cannot run on these GPUs: {fit.why}",
                detail="No driver changes this: the container's CUDA (or its PyTorch build) has no code for the GPU. "
                    + _evidence(release, from_image),
                hint=instead + "; `cudadoctor recommend --image --family ngc-pytorch` picks one.",
                source=source,
            )
        ]
    if fit.gpu_blocked and fit.mode == NOT_KNOWN:
        return [
            Finding(
                code="ngc-gpu-unknown",
                severity=WARN,
                title=f"{what}: whether its CUDA builds for these GPUs is not known",
                detail=f"{fit.why}. An unknown is not counted as a fit. " + _evidence(release, from_image),
                hint="Pull the image and check it again (`--pull`): its TORCH_CUDA_ARCH_LIST says which GPUs it has code for; "
                    "or use a month the table knows (`cudadoctor recommend --image --family ngc-pytorch`).",
                source=source,
            )
        ]
    if fit.mode == FORWARD_COMPAT:
        return [
            Finding(
                code="ngc-forward-compat",
                severity=INFO,
                title=f"{what} runs through CUDA forward compatibility",
                detail=f"{fit.why}. NGC containers put their cuda-compat libraries (/usr/local/cuda/compat/lib) on "
                    f"LD_LIBRARY_PATH, so nothing needs installing. {forward.note if forward else ''} "
                    + _evidence(release, from_image),
                hint="Keep the host's driver on its branch; upgrade it (Table 3) to run the container natively.",
                source=fc_source,
            )
        ]
    if fit.forward_compat_barred:
        return [
            Finding(
                code="ngc-forward-compat-not-applicable",
                severity=WARN,  # the driver check fails the target when nothing else runs it
                title=f"Forward compatibility does not apply to these GPUs: {what} needs a newer driver",
                detail=f"{fit.why}. On such a GPU the container's cuda-compat libraries fail with CUDA error 804 "
                    "(\"forward compatibility was attempted on non supported HW\"). " + _evidence(release, from_image),
                hint=(out_of_reach(ctx.host, ctx.host.support(release.cuda).full_min)
                      or f"Upgrade the driver to >= {ctx.host.support(release.cuda).full_min or 'the release notes minimum'}")
                    + ", or use an older NGC release (`cudadoctor recommend --image --family ngc-pytorch`).",
                source=fc_source,
            )
        ]
    if fit.mode == NO:
        return [
            Finding(
                code="ngc-forward-compat-unavailable",
                severity=INFO,
                title=f"{what} does not run on this host, and forward compatibility cannot help",
                detail=f"{fit.why}. " + _evidence(release, from_image),
                hint="Upgrade the driver, or use an older NGC release (`cudadoctor recommend --image --family ngc-pytorch`).",
                source=fc_source,
            )
        ]
    return []  # minor-version compatibility: driver-minor-compat says it


def forward_compat_covers(ctx: CheckContext, cuda: CudaVersion) -> bool:
    """Whether the target is an NGC container that this host runs through its own cuda-compat."""
    fit = ngc_fit_for_target(ctx)
    return fit is not None and fit.mode == FORWARD_COMPAT and fit.release.cuda is not None and (
        fit.release.cuda.major_minor == cuda.major_minor
    )
