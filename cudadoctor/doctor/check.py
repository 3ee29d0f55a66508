"""The pure entry point: facts, table and request in; target, recommendation and findings out.

No I/O: the CLI probes (or loads a snapshot), calls :func:`check`, and renders what it returns.
The fleet and the Python API call the same function.
"""

from __future__ import annotations

from functools import cached_property, partial
from typing import Optional, Sequence

from ..compat.table import CompatTable
from ..host.view import HostView
from ..model.facts import HostFacts, ImageFacts
from ..model.findings import Finding, exit_status, verdict
from ..model.record import record
from ..model.target import Target
from ..model.versions import CudaVersion, VersionError
from ..recommend import Recommendation, first_fit, newest_fit, no_gpu_in_scope, nothing_to_run_on, recommend, recommend_ngc
from ..rules import CHECKS
from ..rules.context import Check, CheckContext
from .request import Request
from .runner import run_checks
from .target import image_target, ngc_target, release_target


@record
class CheckResult:
    facts: HostFacts
    target: Optional[Target]
    recommendation: Recommendation
    findings: tuple[Finding, ...]
    chose_release: bool = False  # nothing named the build: the recommendation is the newest release that runs here

    @cached_property
    def verdict(self) -> str:
        return verdict(self.findings)  # the findings are frozen: worked out once

    def exit_status(self, strict: bool = False) -> int:
        return exit_status(self.findings, strict)


def ngc_torch(request: Request) -> Optional[str]:
    """The PyTorch minor release --torch asked for, which limits the NGC months considered."""
    return request.release.version if request.release_explicit and request.newer_release is None else None


def chooses_release(request: Request) -> bool:
    """Nothing names the build (no --torch, --variant, --image, NGC family): the newest release
    that runs on the host is the target."""
    return not request.release_explicit and request.variant is None and request.image is None and request.ngc is None


def recommend_for(facts: HostFacts, table: CompatTable, request: Request, images: bool = True) -> Recommendation:
    """The variant (and, for ``images``, the image) that fits this host: of the requested release,
    else of the newest release that runs here; for an NGC family (--family naming one), the newest
    monthly release this host runs."""
    host = HostView.of(facts, table)
    if request.ngc is not None:
        return recommend_ngc(host, request.ngc, ngc_torch(request), today=request.today)
    if chooses_release(request):
        return newest_fit(host, request.family, images)[0]
    return recommend(host, request.release, request.family, images=images)


def _requirements_target(request: Request) -> Target:
    """--require alone: the requirement strings and the host are judged, no PyTorch build."""
    return Target(torch="", variant="", cuda="", origin="--require", requirements=request.requirements,
                  min_memory_bytes=request.min_memory_bytes)


def _host_only_target(request: Request) -> Target:
    """Nothing asked for, and no driver or no GPU to judge a build against: the host alone is
    judged (a release's driver floor would only add a failure that is not the problem)."""
    return Target(torch="", variant="", cuda="", origin="host-only", requirements=request.requirements,
                  min_memory_bytes=request.min_memory_bytes)


def check(
    facts: HostFacts,
    table: CompatTable,
    request: Request,
    image: Optional[ImageFacts] = None,
    checks: Sequence[Check] = CHECKS,
) -> CheckResult:
    """Judge a host for a request. ``image`` is what the Docker daemon said about ``request.image``
    (None when it was not asked: the table and the tag then say what the image holds)."""
    host = HostView.of(facts, table)
    release = request.release
    target = image_target(table, request, request.image, image) if request.image is not None else None
    if target is not None and target.torch and not request.release_explicit:
        # Unless --torch says otherwise, the recommendation is for the release the image holds.
        release = table.release(target.torch) or release
    ngc = request.ngc or (table.ngc_family(target.family) if target is not None and target.family else None)
    newest = None
    chose = target is None and ngc is None and chooses_release(request)
    if ngc is not None:
        recommendation = recommend_ngc(host, ngc, ngc_torch(request), today=request.today)
    elif chose:
        recommendation, newest = newest_fit(host, request.family, images=False)
        release = table.release(recommendation.torch) or release
    else:
        recommendation = recommend(host, release, request.family, images=False)
    if target is None and request.ngc is not None:
        target = ngc_target(table, request, recommendation)
    if target is None and request.requirements and chooses_release(request):
        target = _requirements_target(request)
    if target is None and chose and not recommendation.found and (nothing_to_run_on(host) or no_gpu_in_scope(host)):
        target = _host_only_target(request)
    if target is None:
        target = release_target(request, recommendation, release)
    if image is not None and ngc is None:  # the image's own cuda-compat libcuda (NGC months: rules/ngc.py judges theirs)
        host = host.with_image_compat(image)

    target_cuda = None
    if target.cuda:
        try:
            target_cuda = CudaVersion.parse(target.cuda)
        except VersionError:  # an image's CUDA_VERSION is its own text; the checks skip what they cannot read
            pass
    context = CheckContext(
        host=host, target=target, target_cuda=target_cuda, first_fit=partial(first_fit, host),
        today=request.today, requested_release=request.newer_release, newest=newest, gpus_per_job=request.gpus_per_job,
    )
    findings = run_checks(checks, context)
    return CheckResult(facts, target, recommendation, findings, chose)
