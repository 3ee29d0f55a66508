"""What every check reads, and what a check is: a named unit that declares its report group."""

from __future__ import annotations

from ..compat.table import CompatTable, PytorchRelease
from ..host.view import HostView
from ..model.facts import HostFacts
from ..model.findings import Finding
from ..model.record import kept, record
from ..model.target import Target
from ..model.versions import CudaVersion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Iterable, Optional, Sequence

    from ..recommend import Recommendation

    # (release, the recommendation that fits it) for the first of some releases that fits the host.
    FirstFit = Callable[[Sequence[PytorchRelease]], Optional[tuple[PytorchRelease, "Recommendation"]]]


@record
class CheckContext:
    """The inputs of one check run: the host view (facts parsed once), the complete target, and the
    recommender as a function (the torch check names a build that fits; the checks never import
    the recommender themselves)."""

    host: HostView
    target: Optional[Target]
    target_cuda: Optional[CudaVersion]  # the target's CUDA version, parsed (None: an image that does not say)
    first_fit: FirstFit
    today: Optional[str] = None  # the run's date (YYYY-MM-DD) from the request: the clock is an input
    requested_release: Optional[str] = None  # a --torch newer than the table knows
    # The newest release's recommendation when the target is an older release chosen because it
    # runs here (nothing was asked for): it does not fit, and its fixes say what it needs.
    newest: Optional["Recommendation"] = None
    gpus_per_job: Optional[int] = None  # --gpus-per-job: the GPUs one multi-GPU job uses

    # Cached outside the fields: every check reads them.
    @kept
    def facts(self) -> HostFacts:
        return self.host.facts

    @kept
    def table(self) -> CompatTable:
        return self.host.table


@record
class Check:
    """One concern, in the spirit of flutter doctor's validators: a name, the report group its
    findings appear under, the JSON ``subject`` they carry, and the function that judges it."""

    name: str
    group: str
    subject: str
    run: Callable[[CheckContext], Iterable[Finding]]
