"""The answer: a verdict's one thing to do, decided once.

From a check's result: the build to use (or none), the blocking problem and its fix as words and
as data, the fixes that would make the release that was asked for run, what the newest release
needs when an older one was chosen, and the one plain sentence that explains minor-version
compatibility where it is the answer. The text report, ``check --json`` (its ``answer``), the
fleet and the Python API render this; none of them decides it again. Pure.
"""

from __future__ import annotations

from ..compat.install import install_command
from ..compat.table import CompatTable
from ..host.view import HostView
from ..model.findings import FAIL, INFO, Action, Finding
from ..model.record import record
from ..recommend import Recommendation
from .check import CheckResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

# Failures that another build (variant, release or image) avoids: the answer then leads with the
# build that fits. Any other failure (no driver, no GPU, Docker, a lost GPU) is the thing to fix first.
BUILD_FAILURES = frozenset({"driver-too-old", "gpu-arch-not-built", "gpu-arch-ptx-only", "image-requirement-unsatisfied"})
MAX_FIXES = 3  # when no build fits, each distinct failure's fix, up to this many

# What the answer is, for scripts (the JSON's answer.kind):
USE = "use"  # it runs: use this build
RUNS = "runs"  # the build asked for runs; another fits better (best fit)
FIX_FIRST = "fix-first"  # a problem no other build avoids: fix it, then use the build
USE_INSTEAD = "use-instead"  # the build asked for does not run here, another does
FIX = "fix"  # nothing runs as the host is: the fixes


@record
class Build:
    """A build to use: the wheel variant of a release and, where its family has one, the image."""

    torch: str
    variant: str
    cuda: Optional[str]
    image: Optional[str]
    support: Optional[str]  # full | minor-compat | forward-compat | unknown
    wheel_index_url: Optional[str]
    pip_command: Optional[str]
    # The find-links page PyTorch's pages name for this release's wheels (1.0-1.10; None from 1.11):
    # where a 1.0/1.1 wheel is downloaded from when there is no pip line.
    wheel_page_url: Optional[str] = None
    # The driver it needs, when the driver is not known here (support "unknown").
    needs_driver: Optional[str] = None


@record
class Fix:
    """One thing to do: its words, the finding it comes from ("" for the recommendation's own) and
    the same as data."""

    text: str
    code: str = ""
    actions: tuple[Action, ...] = ()


@record
class Answer:
    verdict: str  # ok | warn | fail
    kind: str  # use | runs | fix-first | use-instead | fix
    problem: Optional[Finding]  # the failure the answer is about (the first that no other build avoids)
    # The fix first; more only when nothing fits as the host is. For use-instead: using the build.
    fixes: tuple[Fix, ...]
    build: Optional[Build]  # the build to use (after the fixes, for fix-first)
    newest_that_runs: bool  # the build was chosen as the newest release that runs here (nothing asked for)
    # What would make the release that was asked for run ("Or, for PyTorch 2.15: ..."), when another is used.
    other: tuple[Fix, ...] = ()
    # When nothing CUDA can be named (no driver, no GPU): what the newest build needs, how to plan
    # for another machine, where the CPU wheels are.
    without_cuda: tuple[Fix, ...] = ()
    newer: Optional[Fix] = None  # what the newest release needs, when an older one was chosen
    explained: Optional[str] = None  # minor-version compatibility in one plain sentence, where the build relies on it
    asked: Optional[str] = None  # the release asked for, when the build is another release
    # How a multi-GPU job's GPUs talk (the multi-gpu-path finding: "8 GPUs, all pairs over NVLink: ready"),
    # where the host has several GPUs or --gpus-per-job was given.
    multi_gpu: Optional[Fix] = None

    @property
    def fix(self) -> Optional[Fix]:
        return self.fixes[0] if self.fixes else None


def pip_command(rec: Recommendation) -> Optional[str]:
    """The pip line that installs a recommendation's wheel, in the form PyTorch documents for its
    release (None when nothing fits, and for a non-default wheel of 1.0/1.1: see wheel_page_url)."""
    if not rec.found or not rec.wheel_index_url:
        return None
    return install_command(
        rec.install_style, rec.torch, rec.install_version or rec.torch, rec.variant or "", rec.wheel_index_url,
        rec.wheel_page_url, rec.first_patch, plain_wheel=rec.plain_wheel,
    )


def pip_line(torch: Optional[str], index_url: Optional[str], first_patch: Optional[str] = None) -> Optional[str]:
    if not torch or not index_url:
        return None
    pin = first_patch or f"{torch}.*"
    return f"pip install 'torch=={pin}' --index-url {index_url}"


def _build(host: HostView, rec: Recommendation) -> Build:
    needs = None
    if rec.support == "unknown" and rec.cuda:
        from ..model.versions import CudaVersion, VersionError

        try:
            support = host.support(CudaVersion.parse(rec.cuda))
        except VersionError:
            support = None
        floor = (support.compat_min or support.full_min) if support is not None else None
        needs = str(floor) if floor is not None else None
    return Build(
        torch=rec.torch, variant=rec.variant or "", cuda=rec.cuda, image=rec.image, support=rec.support,
        wheel_index_url=rec.wheel_index_url, pip_command=pip_command(rec), needs_driver=needs,
        wheel_page_url=rec.wheel_page_url,
    )


def _finding_fix(finding: Finding) -> Fix:
    return Fix(finding.hint, finding.code, finding.actions)


def _same_build(result: CheckResult) -> bool:
    target, rec = result.target, result.recommendation
    if target is None or not rec.found:
        return False
    if target.image and rec.image:  # an image names the build (an NGC month's variant is its month, not cuNNN)
        return target.image == rec.image
    return target.torch == rec.torch and target.variant == rec.variant


def _explained(host: HostView, build: Optional[Build]) -> Optional[str]:
    """Minor-version compatibility, said plainly, where the build to use relies on it."""
    if build is None or build.support != "minor-compat" or not build.cuda:
        return None
    from ..model.versions import CudaVersion, VersionError

    try:
        support = host.support(CudaVersion.parse(build.cuda))
    except VersionError:
        return None
    driver = support.driver or "this driver"
    major = build.cuda.split(".", 1)[0]
    sentence = (f"It runs on your driver {driver}: every CUDA {major}.x build runs on a driver >= {support.compat_min} "
                "(CUDA minor-version compatibility)")
    ceiling = host.driver_ceiling()
    if support.full_min is not None and ceiling is not None and host.past_ceiling(support.full_min):
        sentence += (f"; PTX JIT compilation and the newest CUDA APIs need >= {support.full_min}, which these GPUs never get: "
                     f"{ceiling.words()}")
    elif support.full_min is not None:
        sentence += f"; only PTX JIT compilation and the newest CUDA APIs need >= {support.full_min}"
    return sentence + "."


def _distinct_fixes(fails: Sequence[Finding], rec: Recommendation) -> tuple[Fix, ...]:
    """Each distinct failure's fix when no build fits as the host is (a driver upgrade alone does
    not help a GPU the builds carry no code for)."""
    fixes: list[Fix] = []
    for f in fails:
        if f.hint and f.code not in {fix.code for fix in fixes}:
            fixes.append(_finding_fix(f))
    if not fixes and rec.fixes:
        fixes.append(Fix(rec.fixes[0], "", rec.actions[:1]))
    return tuple(fixes[:MAX_FIXES])


def _recommendation_fixes(rec: Recommendation, skip: str = "") -> tuple[Fix, ...]:
    return tuple(Fix(text, "", (action,)) for text, action in zip(rec.fixes, rec.actions) if action.action != skip)


def _use(rec: Recommendation, action: str) -> Fix:
    """Using another build, as a fix (the fleet's words for a group the build asked for does not run on)."""
    build = rec.image or f"{rec.variant} wheels"
    return Fix(f"use PyTorch {rec.torch} {rec.variant} ({build})", "", (Action(
        action, torch=rec.torch, variant=rec.variant, cuda=rec.cuda, image=rec.image, support=rec.support,
        wheel_index_url=rec.wheel_index_url,
    ),))


def _newer(result: CheckResult) -> Optional[Fix]:
    finding = next((f for f in result.findings if f.code == "newer-release-available"), None)
    if finding is None:
        return None
    return Fix(finding.title, finding.code, finding.actions)


def _multi_gpu(result: CheckResult) -> Optional[Fix]:
    finding = next((f for f in result.findings if f.code == "multi-gpu-path"), None)
    if finding is None or finding.severity == INFO:  # info: the path is not known (a what-if, an old snapshot)
        return None
    return Fix(finding.title, finding.code, finding.actions)


def decide(result: CheckResult, table: CompatTable) -> Answer:
    """The one thing to do for this result."""
    host = HostView.of(result.facts, table)
    findings, rec, target = result.findings, result.recommendation, result.target
    verdict = result.verdict
    fails = [f for f in findings if f.severity == FAIL]
    same = _same_build(result)
    # The user's own choice of build (or, for --require alone, of requirement) is not second-guessed.
    chosen_by_user = target is not None and target.origin in ("--image", "--variant", "--require")
    # --require alone: an unmet requirement is the question asked, not a build another build avoids.
    avoidable = BUILD_FAILURES - {"image-requirement-unsatisfied"} if target is not None and target.origin == "--require" else BUILD_FAILURES
    newest_that_runs = result.chose_release and rec.found
    newer = _newer(result)

    def answer(kind: str, problem: Optional[Finding], fixes: tuple[Fix, ...], used: Optional[Recommendation],
               other: tuple[Fix, ...] = (), without_cuda: tuple[Fix, ...] = ()) -> Answer:
        build = _build(host, used) if used is not None and used.found else None
        asked = rec.torch if used is not None and used is not rec and rec.torch != used.torch else None
        return Answer(
            verdict=verdict, kind=kind, problem=problem, fixes=fixes, build=build,
            newest_that_runs=newest_that_runs and used is rec, other=other, without_cuda=without_cuda, newer=newer,
            explained=_explained(host, build), asked=asked, multi_gpu=_multi_gpu(result),
        )

    if verdict == FAIL:
        blocking = [f for f in fails if f.code not in avoidable]
        problem = (blocking or fails)[0]
        if blocking:
            fixes = (_finding_fix(problem),) if problem.hint else ()
            if chosen_by_user and not same:
                return answer(FIX_FIRST, problem, fixes, None)  # the user's own choice of build is not in question
            if rec.found:
                return answer(FIX_FIRST, problem, fixes, rec)
            if rec.alternative is not None:
                return answer(FIX_FIRST, problem, fixes, rec.alternative)
            return answer(FIX_FIRST, problem, fixes, None, without_cuda=_recommendation_fixes(rec, "make-gpu-visible"))
        if rec.found and not same:
            same_release = target is not None and target.torch == rec.torch
            return answer(USE_INSTEAD, problem, (_use(rec, "use-variant" if same_release else "use-release"),), rec)
        if not rec.found and rec.alternative is not None:
            return answer(USE_INSTEAD, problem, (_use(rec.alternative, "use-release"),), rec.alternative,
                          other=_recommendation_fixes(rec, "use-release"))
        if result.chose_release and rec.fixes:
            # Nothing asked for and no release runs: the recommender's upgrades across releases (the
            # smallest first) answer it; the findings only judge the newest release's build.
            return answer(FIX, problem, _recommendation_fixes(rec)[:MAX_FIXES], None)
        return answer(FIX, problem, _distinct_fixes(fails, rec), rec if rec.found else None)
    if rec.found and (target is None or same):
        return answer(USE, None, (), rec)
    return answer(RUNS, None, (), rec if rec.found else rec.alternative)
