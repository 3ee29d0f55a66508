"""The JSON documents the CLI prints (schema 1). Keys are a public contract: extend, never rename."""

from __future__ import annotations

from ..doctor.answer import Answer, pip_command
from ..doctor.answer_json import action_payload, answer_payload
from ..doctor.check import CheckResult
from ..model.snapshot import to_jsonable
from ..model.findings import Finding
from ..recommend import Recommendation
from ..compat.table import CompatTable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Optional

JSON_SCHEMA = 1


def finding_payload(finding: Finding) -> dict[str, Any]:
    data = {
        "code": finding.code,
        "severity": finding.severity,
        "title": finding.title,
        "detail": finding.detail,
        "hint": finding.hint,
        "source": finding.source,
        "subject": finding.subject,
        "group": finding.group,
        "gpu_index": finding.gpu_index,
        "actions": [action_payload(a) for a in finding.actions],
    }
    return data


def recommendation_payload(rec: Recommendation) -> Optional[dict[str, Any]]:
    if not rec.found:
        return None
    return {
        "image": rec.image,
        "variant": rec.variant,
        "torch": rec.torch,
        "cuda": rec.cuda,
        "family": rec.family,
        "support": rec.support,
        "wheel_index_url": rec.wheel_index_url,
        "pip_command": pip_command(rec),
        "install_style": rec.install_style,
        "wheel_page_url": rec.wheel_page_url,
        "why": rec.why,
        "rejected": [{"variant": r.variant, "reason": r.reason} for r in rec.rejected],
        **_certainty(rec),
        "evidence": rec.evidence,
        "install_version": rec.install_version,
        "first_patch": rec.first_patch,
        "newest_release": _newest(rec),
    }


def _newest(rec: Recommendation) -> Optional[dict[str, Any]]:
    """The newest release, when this recommendation is an older one chosen because the newest does
    not run here: why, and what would run it."""
    newest = rec.newest
    if newest is None:
        return None
    return {"torch": newest.torch, "why": newest.why, "fixes": list(newest.fixes), "actions": [action_payload(a) for a in newest.actions]}


def _certainty(rec: Recommendation) -> dict[str, Any]:
    """How sure the verdict is: the host platform judged for, and what the table does not settle."""
    return {
        "platform": rec.platform,
        "unverified_variants": list(rec.unverified),
        "inferred_variants": list(rec.inferred),
        "notes": list(rec.notes),
    }


def no_recommendation_payload(rec: Recommendation) -> Optional[dict[str, Any]]:
    if rec.found:
        return None
    return {
        "torch": rec.torch,
        "family": rec.family,
        "why": rec.why,
        "rejected": [{"variant": r.variant, "reason": r.reason} for r in rec.rejected],
        "fixes": list(rec.fixes),
        **_certainty(rec),
        "actions": [action_payload(a) for a in rec.actions],
        "alternative": recommendation_payload(rec.alternative) if rec.alternative is not None else None,
    }


def table_payload(table: CompatTable) -> dict[str, Any]:
    overlay = table.raw.get("overlay") if isinstance(table.raw, dict) else None
    return {"path": table.path, "updated": table.updated, "schema": table.schema, "overlay": overlay}


def _without_file_texts(target: Any) -> Any:
    """The target with its image's files stripped of their text (tokens, password hashes): the
    settings that decide the hygiene findings are carried instead (rules.hygiene.withheld)."""
    image = target.image_facts
    if image is None or image.hygiene is None:
        return target
    from ..model.record import replace
    from ..rules.hygiene import withheld

    return replace(target, image_facts=replace(image, hygiene=withheld(image.hygiene)))


def check_payload(result: CheckResult, table: CompatTable, answer: Optional[Answer] = None) -> dict[str, Any]:
    if answer is None:
        from ..doctor.answer import decide

        answer = decide(result, table)
    return {
        "schema": JSON_SCHEMA,
        "verdict": result.verdict,
        "answer": answer_payload(answer),
        "host": to_jsonable(result.facts),
        "target": to_jsonable(_without_file_texts(result.target)) if result.target else None,
        "findings": [finding_payload(f) for f in result.findings],
        "recommendation": recommendation_payload(result.recommendation),
        "no_recommendation": no_recommendation_payload(result.recommendation),
        "table": table_payload(table),
    }


def recommend_payload(rec: Recommendation, table: CompatTable) -> dict[str, Any]:
    return {
        "schema": JSON_SCHEMA,
        "recommendation": recommendation_payload(rec),
        "no_recommendation": no_recommendation_payload(rec),
        "table": table_payload(table),
    }
