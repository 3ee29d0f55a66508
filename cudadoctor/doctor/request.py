"""What a check is asked to judge, resolved once against the table: a frozen Request.

``resolve_request`` takes the values a user gives (the CLI's flags, or a Python caller's
arguments), checks each one and resolves it against the table; every problem is one
RequestError with a one-line message. After that nothing downstream parses them again.
"""

from __future__ import annotations

import re

from ..compat.table import CompatTable, ImageFamily, PytorchRelease, WheelVariant
from ..model.record import record
from ..model.runline import RunLine
from ..model.topology import MAX_GPUS_PER_JOB
from ..model.text import quoted
from .ngc_family import NgcImageFamily
from .wheel_family import WheelImageFamily

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

    from ..model.imageref import ImageRef
    from .family import Family

_RELEASE_TEXT = re.compile(r"^\d+\.\d+(\.\d+)?\Z", re.ASCII)


class RequestError(ValueError):
    """A requested value that cannot be used; the message names it and what is accepted."""


@record
class Request:
    """The workload a host is judged for, complete."""

    release: PytorchRelease  # the PyTorch release (the table's default when none was asked for)
    family: Family  # the image family recommendations are made from (doctor/family.py: wheel or NGC)
    release_explicit: bool = False  # --torch was given: an image does not replace it
    variant: Optional[WheelVariant] = None  # a pinned CUDA variant of the release (--variant)
    image: Optional["ImageRef"] = None  # an image to judge (--image)
    requirements: tuple[str, ...] = ()  # NVIDIA_REQUIRE_* strings to evaluate (--require)
    min_memory_bytes: Optional[int] = None  # warn below this much GPU memory (--min-memory)
    # A --torch newer than every release the table knows (check only): judged as the newest one, and said.
    newer_release: Optional[str] = None
    today: Optional[str] = None  # the date the run happens (YYYY-MM-DD), for the table's age; None: not judged
    run: Optional[RunLine] = None  # the `docker run` line to judge (--run); its image is ``image``
    gpus_per_job: Optional[int] = None  # GPUs one multi-GPU job uses (check --gpus-per-job): the multi-gpu checks run


def resolve_release(table: CompatTable, version: Optional[str]) -> PytorchRelease:
    if not version:
        return table.default_release
    text = version.strip()
    release = table.release(text)
    if release is not None:
        return release
    known = ", ".join(r.version for r in table.pytorch_releases)
    if not _RELEASE_TEXT.match(text):
        raise RequestError(f"invalid --torch {quoted(version)}: expected a PyTorch release such as 2.5 (known: {known})")
    if is_newer_than_table(table, text):
        raise RequestError(
            f"PyTorch {text} is newer than the table knows (its newest is {table.pytorch_releases[-1].version}): "
            "run `cudadoctor table update` to read it "
            "from PyTorch's wheel index (or give a newer table with --table)"
        )
    raise RequestError(f"unknown PyTorch release {quoted(version)}: the table knows {known} (a newer table can be given with --table)")


def is_newer_than_table(table: CompatTable, text: str) -> bool:
    parts = text.strip().split(".")
    try:
        return (int(parts[0]), int(parts[1])) > table.newest_release.key[:2]
    except (IndexError, ValueError):
        return False


def resolve_family(table: CompatTable, name: Optional[str]) -> ImageFamily:
    if not name:
        return table.image_families[0]
    family = table.family(name.strip())
    if family is None:
        known = ", ".join([f.name for f in table.image_families] + [f.name for f in table.ngc_families])
        raise RequestError(f"unknown image family {quoted(name)}: known families are {known}")
    return family


def resolve_family_value(table: CompatTable, name: Optional[str]) -> Family:
    """--family as the request's one family value: an NGC family by that name (with no name, the
    config's NGC default when it set one), else a wheel family (resolve_family)."""
    ngc = table.ngc_family(name.strip()) if name else (table.ngc_family(table.default_ngc) if table.default_ngc else None)
    if ngc is not None:
        return NgcImageFamily(ngc, resolve_family(table, None))
    return WheelImageFamily(resolve_family(table, name))


def parse_image(image: str) -> "ImageRef":
    from ..model.imageref import ImageRefError, parse_image_ref

    try:
        return parse_image_ref(image)
    except ImageRefError as exc:
        raise RequestError(f"--image: {exc}") from None


def parse_requirements(requirements: Sequence[str]) -> tuple[str, ...]:
    """--require strings, each checked as strictly as a user's typing deserves."""
    if not requirements:
        return ()
    from ..model.nvidia_require import RequirementError, validate_requirement

    for text in requirements:
        if not text.replace(",", " ").strip():
            # libnvidia-container would take it as satisfied; on a command line it is a mistake.
            raise RequestError(f"--require {quoted(text)}: no condition in it: give e.g. 'cuda>=12.8' or 'driver>=550'")
        try:
            validate_requirement(text)
        except RequirementError as exc:
            shown = text if len(text) <= 80 else text[:77] + "..."
            raise RequestError(f"--require {quoted(shown)}: bad token {quoted(exc.token[:80])}: {exc.reason}") from None
    return tuple(requirements)


def parse_min_memory(text: Optional[str]) -> Optional[int]:
    if text is None:
        return None
    from ..model.sizes import SizeError, parse_size

    try:
        return parse_size(text)
    except SizeError as exc:
        raise RequestError(f"--min-memory: {exc}") from None


@record
class UserValues:
    """The requested values that are checked without the table (so a typo in one is reported
    before any file is read)."""

    image: Optional["ImageRef"] = None
    requirements: tuple[str, ...] = ()
    min_memory_bytes: Optional[int] = None
    run: Optional[RunLine] = None


def parse_run(text: str) -> RunLine:
    from ..model.runline import RunLineError, parse_run_line

    try:
        return parse_run_line(text)
    except RunLineError as exc:
        raise RequestError(f"--run: {exc}") from None


def parse_user_values(
    image: Optional[str] = None,
    variant: Optional[str] = None,
    requirements: Sequence[str] = (),
    min_memory: Optional[str] = None,
    run: Optional[str] = None,
) -> UserValues:
    """--image, --run, --require and --min-memory, each checked; raises RequestError."""
    line = None
    if run is not None:
        if image is not None:
            raise RequestError("give --run or --image, not both (the run line names the image)")
        line = parse_run(run)
        try:
            ref = parse_image(line.image)
        except RequestError as exc:
            raise RequestError(f"--run: the image {line.image!r}: {str(exc).split(': ', 1)[-1]}") from None
        image = None
    else:
        ref = None
    ref = ref or (parse_image(image) if image is not None else None)
    if ref is not None and variant:
        raise RequestError("give --image or --variant, not both (the image decides the variant)")
    return UserValues(
        image=ref, requirements=parse_requirements(requirements), min_memory_bytes=parse_min_memory(min_memory), run=line
    )


def resolve_request(
    table: CompatTable,
    torch: Optional[str] = None,
    family: Optional[str] = None,
    variant: Optional[str] = None,
    image: Optional[str] = None,
    requirements: Sequence[str] = (),
    min_memory: Optional[str] = None,
    values: Optional[UserValues] = None,
    today: Optional[str] = None,
    newer_ok: bool = False,
    run: Optional[str] = None,
    gpus_per_job: Optional[int] = None,
) -> Request:
    """Check every requested value and resolve it against the table; raises RequestError.
    ``values`` are the already checked image, requirements and memory (parse_user_values)."""
    if gpus_per_job is not None and (isinstance(gpus_per_job, bool) or not isinstance(gpus_per_job, int)
                                     or not 1 <= gpus_per_job <= MAX_GPUS_PER_JOB):
        raise RequestError(f"GPUs per job must be a whole number from 1 to {MAX_GPUS_PER_JOB}, not {quoted(gpus_per_job)}")
    if values is None:
        values = parse_user_values(image, variant, requirements, min_memory, run)
    ref, required, min_memory_bytes = values.image, values.requirements, values.min_memory_bytes
    newer = None
    if newer_ok and torch and _RELEASE_TEXT.match(torch.strip()) and table.release(torch.strip()) is None \
            and table.release(".".join(torch.strip().split(".")[:2])) is None and is_newer_than_table(table, torch):
        # `check --torch 2.99`: judged as the newest release the table knows; table-outdated says so
        newer, torch = torch.strip(), None
    release = resolve_release(table, torch)
    chosen = resolve_family_value(table, family)
    problem = chosen.unheld_release(table, release) if torch and not ref else None
    if problem is not None:
        raise RequestError(problem)
    pinned = None
    if variant:
        pinned = release.variant(variant.strip())
        if pinned is None:
            known = ", ".join(v.name for v in release.variants)
            raise RequestError(f"PyTorch {release.version} has no variant {quoted(variant)}: it ships {known}")
        if not pinned.verified:
            raise RequestError(
                f"PyTorch {release.version} {pinned.name}: no source settles which GPUs its wheels carry code for "
                "(unverified in the table); pick another --variant or --torch"
            )
    return Request(
        release=release,
        family=chosen,
        release_explicit=bool(torch) or newer is not None,
        variant=pinned,
        image=ref,
        requirements=required,
        min_memory_bytes=min_memory_bytes,
        newer_release=newer,
        today=today,
        run=values.run,
        gpus_per_job=gpus_per_job,
    )
