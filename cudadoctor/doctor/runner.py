"""Run the checks: each one's findings stamped with its group and subject; a check that raises
becomes one reported ``internal-error`` finding for that check, and the others still run."""

from __future__ import annotations

from ..model.findings import FAIL, Finding
from ..rules.context import Check, CheckContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable

INTERNAL_ERROR = "internal-error"
_MAX_ERROR_TEXT = 200


def _stamped(f: Finding, check: Check) -> Finding:
    values = f.__dict__
    if values["group"] == check.group and values["subject"]:
        return f
    # This runs for every finding: the copy takes the finding's values as they are (they were
    # checked when it was made) and changes only the two the runner owns, in one dict display,
    # without the record's __init__ (which looks every field up and checks the severity again).
    stamped: Finding = object.__new__(Finding)
    object.__setattr__(stamped, "__dict__", {**values, "subject": values["subject"] or check.subject, "group": check.group})
    return stamped


def crashed(check: Check, exc: BaseException) -> Finding:
    text = f"{type(exc).__name__}: {exc}"
    if len(text) > _MAX_ERROR_TEXT:
        text = text[: _MAX_ERROR_TEXT - 3] + "..."
    return Finding(
        code="internal-error",
        severity=FAIL,
        title=f"The {check.name} check crashed: {text}",
        detail="A bug in cudadoctor stopped this one check; the other checks ran. What it would have judged is "
        "unknown, so the verdict counts it as failing.",
        hint="Please report it with the host's snapshot (`cudadoctor probe --output host.json`) and the command "
        "line; `--snapshot host.json` reproduces it anywhere.",
        source="cudadoctor",
        subject=check.subject,
        group=check.group,
    )


def run_checks(checks: Iterable[Check], ctx: CheckContext) -> tuple[Finding, ...]:
    findings: list[Finding] = []
    for check in checks:
        try:
            made = check.run(ctx)
            # Most checks have nothing to say on a host: an empty list or tuple has nothing to stamp
            # (anything else is walked, and fails here as it did if it is not findings).
            if made or type(made) not in (list, tuple):
                made = [_stamped(finding, check) for finding in made]
        except Exception as exc:  # one broken check must not take the whole report down
            made = [crashed(check, exc)]
        findings.extend(made)
    return tuple(findings)
