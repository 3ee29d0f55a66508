"""The PyTorch wheel families as a Family (doctor/family.py): a tag per PyTorch release and CUDA
variant (pytorch/pytorch, pytorch-cuda, a user's families file), and the wheels themselves."""

from __future__ import annotations

from ..compat.table import CompatTable, ImageFamily, PytorchRelease
from ..model.record import record
from ..model.target import Target
from ..recommend import Recommendation, newest_fit, recommend
from .kinds import WHEEL_IMAGE
from .ngc_family import NgcImageFamily
from .target import release_target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from ..fleet.judge import Coverage
    from ..host.view import HostView
    from .family import CandidateReach, Family
    from .request import Request


@record
class WheelImageFamily:
    """A wheel family: its builds are a release's CUDA variants, its images their tags."""

    images: ImageFamily

    kind = WHEEL_IMAGE
    offers_wheels = True
    uses_image_compat = True  # the image's own cuda-compat libcuda is what its CUDA runs on
    newest_words = "the newest release each runs"

    @property
    def name(self) -> str:
        return self.images.name

    @property
    def wheel_family(self) -> ImageFamily:
        return self.images

    def chooses_release(self, request: "Request") -> bool:
        return not request.release_explicit and request.variant is None and request.image is None

    def judges_newest(self, request: "Request") -> bool:
        return self.chooses_release(request)

    def unheld_release(self, table: CompatTable, release: PytorchRelease) -> Optional[str]:
        return None  # every release has wheels; whether the family has an image of one is the recommendation's

    def for_image(self, table: CompatTable, target: Optional[Target]) -> Family:
        """An image of an NGC family's tag is judged as that family's month."""
        found = table.ngc_family(target.family) if target is not None and target.family else None
        return NgcImageFamily(found, self.images) if found is not None else self

    def recommend(self, host: "HostView", request: "Request", images: bool = True) -> Recommendation:
        """Of the requested release, else (nothing asked for) of the newest release that runs here."""
        if self.chooses_release(request):
            return newest_fit(host, self.images, images)[0]
        return recommend(host, request.release, self.images, images=images)

    def target(self, table: CompatTable, request: "Request", recommendation: Recommendation) -> Target:
        return release_target(request, recommendation)

    def candidates(self, table: CompatTable, request: "Request", reach: CandidateReach) -> list["Coverage"]:
        """Every wheel build: of every release when none was asked for, else of the one asked for."""
        return reach.wheel_builds(table.pytorch_releases if self.chooses_release(request) else (request.release,))
