"""The answer as JSON types (check --json's ``answer``, the fleet's groups): pure, so the fleet
and the report shape it the same way. Keys are a public contract: extend, never rename."""

from __future__ import annotations

from ..model.findings import Action
from .answer import Answer, Build, Fix, pip_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional


def action_payload(action: Action) -> dict[str, Any]:
    """Every key always present (null when it does not apply), so a script can index without checks."""
    return {
        "action": action.action,
        "min_driver": action.min_driver,
        "full_driver": action.full_driver,
        "torch": action.torch,
        "variant": action.variant,
        "cuda": action.cuda,
        "image": action.image,
        "support": action.support,
        "wheel_index_url": action.wheel_index_url,
        "pip_command": action.pip_command or pip_line(action.torch, action.wheel_index_url),
    }


def _build_payload(build: Optional[Build]) -> Optional[dict[str, Any]]:
    if build is None:
        return None
    return {
        "torch": build.torch, "variant": build.variant, "cuda": build.cuda, "image": build.image, "support": build.support,
        "wheel_index_url": build.wheel_index_url, "pip_command": build.pip_command, "needs_driver": build.needs_driver,
        "wheel_page_url": build.wheel_page_url,
    }


def fix_payload(fix: Fix) -> dict[str, Any]:
    return {"text": fix.text, "code": fix.code or None, "actions": [action_payload(a) for a in fix.actions]}


def answer_payload(answer: Answer) -> dict[str, Any]:
    """The report's answer as data (doctor/answer.py decides it): what to do, first."""
    return {
        "verdict": answer.verdict,
        "kind": answer.kind,
        "problem": None if answer.problem is None else {"code": answer.problem.code, "title": answer.problem.title},
        "fix": fix_payload(answer.fix) if answer.fix is not None else None,
        "fixes": [fix_payload(f) for f in answer.fixes],
        "build": _build_payload(answer.build),
        "newest_that_runs": answer.newest_that_runs,
        "asked_release": answer.asked,
        "other_fixes": [fix_payload(f) for f in answer.other],
        "without_cuda": [fix_payload(f) for f in answer.without_cuda],
        "newer": fix_payload(answer.newer) if answer.newer is not None else None,
        "explained": answer.explained,
        "multi_gpu": fix_payload(answer.multi_gpu) if answer.multi_gpu is not None else None,
    }


