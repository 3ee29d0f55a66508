"""What is being checked against: a PyTorch release, one of its CUDA variants, maybe an image."""

from __future__ import annotations

from typing import Optional

from .facts import ImageFacts
from .record import record


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
