"""The Target the checks judge, built once and complete: from the request and the recommendation,
or from an image (the table's family facts for its tag, else its environment, else its tag). Pure."""

from __future__ import annotations

import re

from ..compat.table import CompatTable
from ..model.facts import ImageFacts
from ..model.record import record, replace
from ..model.target import Target
from ..model.versions import CudaVersion, VersionError
from ..recommend import Recommendation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

    from ..model.imageref import ImageRef
    from .request import Request

# pytorch/pytorch tags: 2.5.1-cuda12.4-cudnn9-runtime. Kept as text: re compiles (and caches) them
# on first use, which only `check --image` reaches.
_PYTORCH_TAG = r"^v?(?P<torch>\d+\.\d+(?:\.\d+)?)-cuda(?P<cuda>\d+\.\d+)"
_CUDA_IN_TAG = r"(?:^|[-_])(?:cuda(?P<dotted>\d+\.\d+)|cu(?P<packed>\d{3}))(?:[-_.]|$)"


@record
class ImageHolds:
    """The PyTorch release and CUDA variant an image holds, and where that was read."""

    torch: str  # "" when no known release was recognised
    variant: str
    cuda: str
    family: Optional[str]  # the table's family whose tag this is
    facts_from: Optional[str]  # "table" | "image-env" | "image-tag" | None
    arch_list: Optional[tuple[str, ...]] = None  # TORCH_CUDA_ARCH_LIST words, for an NGC image


def release_target(request: Request, recommendation: Recommendation) -> Target:
    """The pinned variant, else the recommendation, else what a plain `pip install torch` gives."""
    release, family = request.release, request.family.wheel_family
    recommended = release.variant(recommendation.variant or "") if recommendation.found else None
    if request.variant is not None:
        chosen, origin = request.variant, "--variant"
    elif recommended is not None:
        chosen, origin = recommended, "recommendation"
    else:
        chosen = release.variant(release.default_variant or "") or release.variants[-1]
        origin = "default-wheel"
    offered = chosen.name in family.variants_for(release)
    return Target(
        torch=release.version,
        variant=chosen.name,
        cuda=str(chosen.cuda.major_minor),
        image=family.reference(release, chosen) if offered else None,
        family=family.name if offered else None,
        origin=origin,
        requirements=request.requirements,
        min_memory_bytes=request.min_memory_bytes,
    )


def image_target(table: CompatTable, request: Request, ref: "ImageRef", image: Optional[ImageFacts]) -> Target:
    """The image as the target: what it holds, its facts as the daemon gave them (``image``)."""
    reference = str(ref)
    if image is None:  # a caller that did not inspect it: judge what the table and the tag say
        image = ImageFacts(reference, state="not-probed", error="the image was not inspected")
    holds = what_image_holds(table, ref, image)
    # The torch inside the image, read from its own binaries, beats what the table or its env say.
    arch_list = image.torch_arch_list or holds.arch_list
    return Target(
        torch=holds.torch,
        variant=holds.variant,
        cuda=holds.cuda,
        image=reference,
        family=holds.family,
        origin="--image",
        requirements=request.requirements,
        min_memory_bytes=request.min_memory_bytes,
        image_facts=replace(image, facts_from=holds.facts_from),
        arch_list=arch_list,
        run=request.run,
    )


def family_match(table: CompatTable, ref: ImageRef) -> Optional[ImageHolds]:
    """The table's facts when REF is one of its family tags (``pytorch-cuda:v2.9-cu128``,
    ``pytorch/pytorch:2.5.0-cuda12.4-cudnn9-runtime``: any patch release of a known minor), also
    when pulled through a registry mirror (same path, another domain)."""
    if not ref.tag:
        return None
    for name in dict.fromkeys((ref.name, ref.path)):
        found = table.parse_family_reference(f"{name}:{ref.tag}")
        if found is not None:
            family, release, variant = found
            return ImageHolds(release.version, variant.name, str(variant.cuda.major_minor), family.name, "table")
    return None


def _cuda_major_minor(text: Optional[str]) -> Optional[CudaVersion]:
    if not text:
        return None
    # NGC images write a build number too (CUDA_VERSION=12.4.1.003): major.minor.patch is the version.
    head = ".".join(text.strip().lstrip("vV").split("-", 1)[0].split(".")[:3])
    try:
        return CudaVersion.parse(head).major_minor
    except VersionError:
        return None


def variant_name(cuda: CudaVersion) -> str:
    return f"cu{cuda.major}{cuda.minor}"


def _env_arch_list(image: ImageFacts) -> Optional[tuple[str, ...]]:
    from ..compat.ngc import NgcError, arch_words

    text = image.env_value("TORCH_CUDA_ARCH_LIST")
    if not text:
        return None
    try:
        return arch_words(text) or None
    except NgcError:  # the image's own text; what cannot be read is not judged
        return None


def ngc_match(table: CompatTable, ref: ImageRef, image: ImageFacts) -> Optional[ImageHolds]:
    """An NGC PyTorch tag (``YY.MM-py3``, also through a mirror): CUDA and PyTorch from the image's
    environment when the image is here (it is what will run), else from the table's entry for the
    month; the arch list from the image's TORCH_CUDA_ARCH_LIST when present, else the table's."""
    if not ref.tag:
        return None
    for name in dict.fromkeys((ref.name, ref.path)):
        found = table.ngc_match(name, ref.tag)
        if found is None:
            continue
        family, _month, entry = found
        arch = _env_arch_list(image) or (entry.arch_list if entry else None)
        present = image.state == "ok" and bool(image.env_value("CUDA_VERSION"))
        if entry is not None and entry.cuda is not None and not present:
            cuda = entry.cuda.major_minor
            minor = entry.torch_minor
            release = table.release(minor) if minor else None
            return ImageHolds(release.version if release else "", variant_name(cuda), str(cuda), family.name, "table", arch)
        holds = _from_env_and_tag(table, ref, image)
        return replace(holds, family=family.name, arch_list=arch)
    return None


def what_image_holds(table: CompatTable, ref: ImageRef, image: ImageFacts) -> ImageHolds:
    """The PyTorch release and CUDA variant the image holds: the table's family facts first (the
    wheel families, then the NGC months), then the image's env (PYTORCH_VERSION, CUDA_VERSION,
    NV_CUDA_CUDART_VERSION), then its tag."""
    from_ngc = ngc_match(table, ref, image)
    if from_ngc is not None:
        return from_ngc
    from_table = family_match(table, ref)
    if from_table is not None:
        return from_table
    return _from_env_and_tag(table, ref, image)


def _from_env_and_tag(table: CompatTable, ref: ImageRef, image: ImageFacts) -> ImageHolds:
    torch_text = image.env_value("PYTORCH_VERSION")
    cuda = _cuda_major_minor(image.env_value("CUDA_VERSION")) or _cuda_major_minor(image.env_value("NV_CUDA_CUDART_VERSION"))
    facts_from = "image-env" if (torch_text or cuda) else None
    tag_match = re.match(_PYTORCH_TAG, ref.tag or "")
    if not torch_text and tag_match:
        torch_text = tag_match.group("torch")
        facts_from = facts_from or "image-tag"
    if cuda is None and ref.tag:
        found = tag_match.group("cuda") if tag_match else None
        if not found:
            other = re.search(_CUDA_IN_TAG, ref.tag)
            if other:
                found = other.group("dotted") or (other.group("packed")[:-1] + "." + other.group("packed")[-1])
        cuda = _cuda_major_minor(found)
        if cuda is not None:
            facts_from = "image-tag" if facts_from is None else facts_from
    release = None
    if torch_text:
        clean = torch_text.strip().lstrip("vV").split("+", 1)[0]
        release = table.release(clean) or table.release(".".join(clean.split(".")[:2]))
    return ImageHolds(
        torch=release.version if release else "",
        variant=variant_name(cuda) if cuda else "",
        cuda=str(cuda) if cuda else "",
        family=None,
        facts_from=facts_from,
    )
