"""Is the table current? A release newer than it knows (installed torch, an image's PYTORCH_VERSION,
--torch), or a table (overlay included) older than STALE_AFTER_DAYS, is worth an info finding that
suggests `cudadoctor table update`. The clock comes in with the request (``ctx.today``), never from
the system here: the check is pure."""

from __future__ import annotations

from ..model.dates import days_between
from ..model.findings import INFO, Finding
from .context import CheckContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

STALE_AFTER_DAYS = 120
HINT = "run `cudadoctor table update` to read the newest releases from PyTorch's wheel index"
SOURCE = "the compatibility table's `updated` date and its PyTorch releases (docs/table.md)"


def _key(text: str) -> Optional[tuple[int, int]]:
    parts = text.strip().lstrip("vV").split("+", 1)[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def _named_releases(ctx: CheckContext) -> list[tuple[str, str]]:
    """(where it was named, the release text) for each release the run was told about."""
    named = []
    torch = ctx.facts.torch
    if torch is not None and torch.version:
        named.append(("the installed torch", torch.version))
    target = ctx.target
    image = target.image_facts if target is not None else None
    if image is not None and image.env_value("PYTORCH_VERSION"):
        named.append(("the image's PYTORCH_VERSION", image.env_value("PYTORCH_VERSION") or ""))
    if ctx.requested_release:
        named.append(("--torch", ctx.requested_release))
    return named


def check_table_current(ctx: CheckContext) -> list[Finding]:
    table = ctx.table
    newest = table.newest_release
    findings = []
    for where, text in _named_releases(ctx):
        key = _key(text)
        if key is not None and key > newest.key[:2]:
            findings.append(
                Finding(
                    code="table-outdated",
                    severity=INFO,
                    title=f"{where} is PyTorch {text}, newer than the table knows (newest: {newest.version})",
                    detail=f"Verdicts about PyTorch {text} use what the table knows of {newest.version} or nothing; "
                    f"the table was last updated {table.updated}.",
                    hint=HINT,
                    source=SOURCE,
                )
            )
    # "Now" is an input: the request's date, else when the facts were probed (a snapshot keeps its own).
    now = ctx.today or (ctx.facts.probed_at or "")[:10] or None
    age = _age_days(table.updated, now)
    if age is not None and age > STALE_AFTER_DAYS:
        findings.append(
            Finding(
                code="table-outdated",
                severity=INFO,
                title=f"The compatibility table is {age} days old (updated {table.updated})",
                detail=f"PyTorch publishes a release every few months; releases after {table.updated} are unknown to it "
                f"(newest known: {newest.version}).",
                hint=HINT,
                source=SOURCE,
            )
        )
    return findings


def _age_days(updated: str, today: Optional[str]) -> Optional[int]:
    if not today:
        return None
    return days_between(updated, today)
