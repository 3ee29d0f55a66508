"""The one family value a Request holds: what the callers ask of an image family, whatever its kind.

Two kinds implement it: the PyTorch wheel families (doctor/wheel_family.py: a tag per PyTorch
release and CUDA variant, and the wheels themselves) and NGC (doctor/ngc_family.py: a tag per
monthly release, each with its own CUDA and PyTorch build). The doctor, the fleet, the reports
and the command line ask the family; none of them tests which kind it is. The families do not
derive from it (it is structural), so it is imported for type checking and by the tests, never on
a command's path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from ..compat.table import CompatTable, ImageFamily, PytorchRelease
    from ..fleet.judge import Coverage
    from ..host.view import HostView
    from ..model.target import Target
    from ..recommend import Recommendation
    from .request import Request

from .kinds import NGC, WHEEL_IMAGE

__all__ = ["NGC", "WHEEL_IMAGE", "CandidateReach", "Family"]


class CandidateReach(Protocol):
    """What the fleet measures for a family's candidates (fleet/judge.py implements it): how far a
    build reaches over the fleet's groups of hosts."""

    def wheel_builds(self, releases: Sequence["PytorchRelease"]) -> list["Coverage"]:
        """Every wheel build of these releases, the most hosts first."""
        ...

    def image(self, request: "Request", image: str) -> "Coverage":
        """The image ``request`` names, checked as the target on every group."""
        ...


@runtime_checkable
class Family(Protocol):
    """An image family as the callers use it."""

    @property
    def name(self) -> str:
        """The family's name as the user gives it (--family) and the reports print it."""
        ...

    @property
    def kind(self) -> str:
        """WHEEL_IMAGE or NGC."""
        ...

    @property
    def offers_wheels(self) -> bool:
        """Whether its builds are PyTorch's wheels (a release and CUDA variant): `recommend --wheel`,
        `fleet --matrix`, `--plan`, `--format prometheus/html` and node-affinity judge those."""
        ...

    @property
    def uses_image_compat(self) -> bool:
        """Whether an inspected image's own cuda-compat libcuda is the host's for the checks (an NGC
        month's is judged by rules/ngc.py instead)."""
        ...

    @property
    def wheel_family(self) -> "ImageFamily":
        """The wheel family whose builds stand in where this family names none (for a wheel family, itself)."""
        ...

    def chooses_release(self, request: "Request") -> bool:
        """Nothing names the build: the newest release that runs on the host is the target."""
        ...

    def judges_newest(self, request: "Request") -> bool:
        """The fleet is judged for the newest build each host runs, in the words of ``newest_words``."""
        ...

    @property
    def newest_words(self) -> str:
        """What the fleet report says it judged for, when ``judges_newest``."""
        ...

    def unheld_release(self, table: "CompatTable", release: "PytorchRelease") -> Optional[str]:
        """Why --torch RELEASE asks for something the family cannot hold (None: it can)."""
        ...

    def for_image(self, table: "CompatTable", target: Optional["Target"]) -> "Family":
        """The family that recommends for a check of ``target`` (an image of another kind's tag is
        judged by that kind's family)."""
        ...

    def recommend(self, host: "HostView", request: "Request", images: bool = True) -> "Recommendation":
        """The build (and, for ``images``, the image) that fits this host, and why the others lost."""
        ...

    def target(self, table: "CompatTable", request: "Request", recommendation: "Recommendation") -> "Target":
        """The Target the checks judge when no image names one."""
        ...

    def candidates(self, table: "CompatTable", request: "Request", reach: CandidateReach) -> list["Coverage"]:
        """The fleet's candidate builds, best first, measured by ``reach``."""
        ...
