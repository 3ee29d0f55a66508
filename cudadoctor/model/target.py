"""What is being checked against: a PyTorch release, one of its CUDA variants, maybe an image."""

from __future__ import annotations

from .facts import ImageFacts
from .record import record
from .runline import RunLine

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


@record
class Target:
    """The workload the host is judged for. ``origin`` says how it was chosen."""

    torch: str  # PyTorch release, "2.9"
    variant: str  # CUDA variant, "cu128"
    cuda: str  # "12.8"
    image: Optional[str] = None  # "pytorch-cuda:v2.9-cu128", when an image is the target
    family: Optional[str] = None
    origin: str = "recommendation"  # recommendation | default-wheel | --variant | --image
    requirements: tuple[str, ...] = ()  # NVIDIA_REQUIRE_* strings the workload carries (or --require)
    min_memory_bytes: Optional[int] = None
    image_facts: Optional[ImageFacts] = None  # what the Docker daemon said about --image REF
    # The build's own arch list when it is not a table variant's: an NGC image's TORCH_CUDA_ARCH_LIST
    # words ("8.0", "9.0+PTX"), from its environment or the table's NGC entry.
    arch_list: Optional[tuple[str, ...]] = None
    run: Optional[RunLine] = None  # the `docker run` line the image is started with (check --run)
