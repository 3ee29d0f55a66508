"""The pure entry point: facts, table and request in; target, recommendation and findings out.

No I/O: the CLI probes (or loads a snapshot), calls :func:`check`, and renders what it returns.
The fleet and the Python API call the same function.
"""

from __future__ import annotations

from functools import cached_property, partial

from ..compat.table import CompatTable
from ..host.view import HostView, parsed_cuda
from ..model.facts import HostFacts, ImageFacts
from ..model.findings import Finding, exit_status, verdict
from ..model.record import record, replace
from ..model.target import Target
from ..recommend import Recommendation, first_fit, no_gpu_in_scope, nothing_to_run_on
from ..rules import CHECKS
from ..rules.context import Check, CheckContext
from .request import Request
from .runner import run_checks
from .target import image_target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence


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


def chooses_release(request: Request) -> bool:
    """Nothing names the build (no --torch, --variant, --image, NGC family): the newest release
    that runs on the host is the target."""
    return request.family.chooses_release(request)


def recommend_for(facts: HostFacts, table: CompatTable, request: Request, images: bool = True) -> Recommendation:
    """The variant (and, for ``images``, the image) that fits this host: of the requested release,
    else of the newest release that runs here; for an NGC family (--family naming one), the newest
    monthly release this host runs."""
    return request.family.recommend(HostView.of(facts, table), request, images)


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
    # The family whose recommender judges: the request's, or an NGC month's when the image is one.
    family = request.family.for_image(table, target)
    chose = chooses_release(request)  # nothing names the build, so no image either: target is None
    recommendation = family.recommend(host, request if release is request.release else replace(request, release=release), images=False)
    newest = recommendation.newest
    if chose:
        release = table.release(recommendation.torch) or release
    if target is None and request.requirements and chose:
        target = _requirements_target(request)
    if target is None and chose and not recommendation.found and (nothing_to_run_on(host) or no_gpu_in_scope(host)):
        target = _host_only_target(request)
    if target is None:
        target = request.family.target(table, request if release is request.release else replace(request, release=release), recommendation)
    if image is not None and family.uses_image_compat:  # the image's own cuda-compat libcuda (NGC months: rules/ngc.py judges theirs)
        host = host.with_image_compat(image)

    # An image's CUDA_VERSION is its own text: the checks skip what they cannot read (None).
    target_cuda = parsed_cuda(table, target.cuda)
    context = CheckContext(
        host=host, target=target, target_cuda=target_cuda, first_fit=partial(first_fit, host),
        today=request.today, requested_release=request.newer_release, newest=newest, gpus_per_job=request.gpus_per_job,
    )
    findings = run_checks(checks, context)
    return CheckResult(facts, target, recommendation, findings, chose)
