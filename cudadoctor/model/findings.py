"""Findings: one verdict of one check, with a stable code, and the verdict over all of them."""

from __future__ import annotations

from .record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable, Optional

OK = "ok"
INFO = "info"
WARN = "warn"
FAIL = "fail"
SEVERITIES = (OK, INFO, WARN, FAIL)


@record
class Action:
    """A fix a script can act on without parsing prose (the JSON's ``actions``); the worded form
    stays in the finding's hint or the recommendation's fixes.

    ``action`` says what to do: ``upgrade-driver`` (to >= ``min_driver``; ``full_driver`` gives
    full support), ``use-release`` (PyTorch ``torch``, its ``variant``/``image``) or
    ``use-variant`` (another ``variant`` of the same release). Fields that do not apply are None.
    """

    action: str
    min_driver: Optional[str] = None
    full_driver: Optional[str] = None
    torch: Optional[str] = None
    variant: Optional[str] = None
    cuda: Optional[str] = None
    image: Optional[str] = None
    support: Optional[str] = None  # full | minor-compat: what the variant gets once the action is done
    wheel_index_url: Optional[str] = None
    # The pip line PyTorch documents for that build (None: the index-url form from torch and
    # wheel_index_url; set where the release documents another form, such as -f for 1.2-1.10).
    pip_command: Optional[str] = None


@record
class Finding:
    """One checked fact. ``code`` is a public contract: scripts match on it; never rename one.

    ``subject`` (the JSON key) and ``group`` (the report group) come from the check that made the
    finding: the runner fills them in, so a rule states only what it found.
    """

    code: str
    severity: str  # ok | info | warn | fail
    title: str
    detail: str = ""
    hint: str = ""
    source: str = ""  # where the rule's facts come from (document and section), or the probe
    subject: str = ""  # nvml, driver, gpu, image, docker, torch, environment
    gpu_index: Optional[int] = None
    group: str = ""  # the report group of the check that made it (cudadoctor.rules.GROUPS)
    actions: tuple[Action, ...] = ()  # the hint as data, where it names something a script can do

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")


def verdict(findings: Iterable[Finding]) -> str:
    """``fail`` if any finding fails, else ``warn`` if any warns, else ``ok``."""
    severities = {finding.severity for finding in findings}  # a finding's severity is one of SEVERITIES (checked when made)
    return FAIL if FAIL in severities else WARN if WARN in severities else OK


def exit_status(findings: Iterable[Finding], strict: bool = False) -> int:
    """0 when nothing fails (warnings allowed), 1 when something fails, or warns under --strict."""
    result = verdict(findings)
    if result == FAIL or (strict and result == WARN):
        return 1
    return 0
