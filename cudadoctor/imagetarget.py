"""From an image (its env, its tag, or the table's family) to the Target the rules judge. Pure."""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from .facts import ImageFacts
from .imageref import ImageRef
from .table import CompatTable
from .target import Target
from .versions import CudaVersion, VersionError

# pytorch/pytorch tags: 2.5.1-cuda12.4-cudnn9-runtime
_PYTORCH_TAG_RE = re.compile(r"^v?(?P<torch>\d+\.\d+(?:\.\d+)?)-cuda(?P<cuda>\d+\.\d+)")
_CUDA_IN_TAG_RE = re.compile(r"(?:^|[-_])(?:cuda(?P<dotted>\d+\.\d+)|cu(?P<packed>\d{3}))(?:[-_.]|$)")


def family_match(table: CompatTable, ref: ImageRef) -> Optional[Target]:
    """The table's facts when REF is one of its family tags (``pytorch-cuda:v2.9-cu128``,
    ``pytorch/pytorch:2.5.0-cuda12.4-cudnn9-runtime``: any patch release of a known minor), also
    when pulled through a registry mirror (same path, another domain)."""
    if not ref.tag:
        return None
    for name in dict.fromkeys((ref.name, ref.path)):
        found = table.parse_family_reference(f"{name}:{ref.tag}")
        if found is not None:
            family, release, variant = found
            return Target(
                torch=release.version,
                variant=variant.name,
                cuda=str(variant.cuda.major_minor),
                image=str(ref),
                family=family.name,
                origin="--image",
            )
    return None


def _cuda_major_minor(text: Optional[str]) -> Optional[CudaVersion]:
    if not text:
        return None
    head = text.strip().lstrip("vV").split("-", 1)[0]
    try:
        return CudaVersion.parse(head).major_minor
    except VersionError:
        return None


def _variant_name(cuda: CudaVersion) -> str:
    return f"cu{cuda.major}{cuda.minor}"


def derive_target(table: CompatTable, ref: ImageRef, image: ImageFacts, requirements: tuple[str, ...] = ()) -> Target:
    """The PyTorch release and CUDA variant the image holds: the table's family facts first, then
    the image's env (PYTORCH_VERSION, CUDA_VERSION, NV_CUDA_CUDART_VERSION), then its tag."""
    from_table = family_match(table, ref)
    if from_table is not None:
        facts_from = "table"
        target = from_table
    else:
        torch_text = image.env_value("PYTORCH_VERSION")
        cuda = _cuda_major_minor(image.env_value("CUDA_VERSION")) or _cuda_major_minor(image.env_value("NV_CUDA_CUDART_VERSION"))
        facts_from = "image-env" if (torch_text or cuda) else None
        tag_match = _PYTORCH_TAG_RE.match(ref.tag or "")
        if not torch_text and tag_match:
            torch_text = tag_match.group("torch")
            facts_from = facts_from or "image-tag"
        if cuda is None and ref.tag:
            found = tag_match.group("cuda") if tag_match else None
            if not found:
                other = _CUDA_IN_TAG_RE.search(ref.tag)
                if other:
                    found = other.group("dotted") or (other.group("packed")[:-1] + "." + other.group("packed")[-1])
            cuda = _cuda_major_minor(found)
            if cuda is not None:
                facts_from = "image-tag" if facts_from is None else facts_from
        release = None
        if torch_text:
            clean = torch_text.strip().lstrip("vV").split("+", 1)[0]
            release = table.release(clean) or table.release(".".join(clean.split(".")[:2]))
        variant_name = _variant_name(cuda) if cuda else ""
        target = Target(
            torch=release.version if release else "",
            variant=variant_name,
            cuda=str(cuda) if cuda else "",
            image=str(ref),
            family=None,
            origin="--image",
        )
    image = dataclasses.replace(image, facts_from=facts_from)
    return dataclasses.replace(target, requirements=requirements, image_facts=image)
