"""The fleet as one JSON document (cudadoctor/schemas/fleet.schema.json). Pure: a FleetResult in,
JSON types out; the CLI prints them (the text is report/fleet_text.py's).

``fleet_members`` gives the document's members in order, its long lists (groups, candidates) as
iterators that build each entry when it is asked for, so the CLI writes a million nodes' report
entry by entry (cli/inputs.emit_json_members) instead of holding the whole document and its text;
``fleet_payload`` is the same members as one dict."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..doctor.request import Request
from ..doctor.answer_json import answer_payload
from .judge import Coverage, FleetResult, HostGroup

FLEET_SCHEMA = 1


def target_payload(request: Request) -> dict[str, Any]:
    from ..doctor.check import chooses_release

    return {
        "torch": request.release.version,
        "newest_that_runs": chooses_release(request),
        "family": request.family.name,
        "variant": request.variant.name if request.variant is not None else None,
        "image": str(request.image) if request.image is not None else None,
    }


class _Groups:
    """Each group's entry. Groups share objects (a class's answer where it quotes no driver, the
    GPUs of nodes labelled alike): with ``reuse``, each one's JSON is made once and every entry
    holds the same one, for a writer that only reads them; without, each entry has its own."""

    def __init__(self, reuse: bool) -> None:
        self.reuse = reuse
        self.answers: dict[int, tuple[object, dict[str, Any]]] = {}
        self.gpus: dict[int, tuple[object, list[dict[str, Any]]]] = {}

    def entry(self, group: HostGroup) -> dict[str, Any]:
        result, facts, answer = group.result, group.facts, group.answer
        rec = result.recommendation if result is not None else None
        target = result.target if result is not None else None
        answered = None
        if answer is not None:
            known = self.answers.get(id(answer)) if self.reuse else None
            if known is None:
                known = (answer, answer_payload(answer))
                if self.reuse:
                    self.answers[id(answer)] = known
            answered = known[1]
        gpus: list[dict[str, Any]] = []
        if facts is not None:
            shown = self.gpus.get(id(facts.gpus)) if self.reuse else None
            if shown is None:
                shown = (facts.gpus, [
                    {"name": k.name, "compute_capability": k.compute_capability, "count": k.count} for k in group.gpu_kinds
                ])
                if self.reuse:
                    self.gpus[id(facts.gpus)] = shown
            gpus = shown[1]
        return {
            "hosts": list(group.names),
            "count": len(group.hosts),
            "verdict": group.verdict,
            "findings": list(group.blocking),
            "driver": group.driver,
            "cuda_driver": facts.driver.cuda_driver_version if facts is not None else None,
            "gpus": gpus,
            "os": group.os,
            "missing": list(group.missing),
            "sources": [group.hosts[0].origin] if len(group.hosts) == 1 else sorted({h.origin for h in group.hosts}),
            "target": None if target is None else {"variant": target.variant, "cuda": target.cuda, "image": target.image},
            "recommendation": None
            if rec is None
            else {"torch": rec.torch, "variant": rec.variant, "cuda": rec.cuda, "image": rec.image, "support": rec.support},
            "fix": group.fix,
            "answer": answered,
        }


def _coverage(coverage: Optional[Coverage], judged: int) -> Optional[dict[str, Any]]:
    if coverage is None:
        return None
    return {
        "variant": coverage.variant,
        "cuda": coverage.cuda,
        "image": coverage.image,
        "hosts": coverage.hosts,
        "of": judged,
        "torch": coverage.torch,
        "left_out": [
            {"hosts": list(left.hosts), "count": len(left.hosts), "findings": list(left.findings), "fix": left.fix}
            for left in coverage.left_out
        ],
    }


def fleet_members(fleet: FleetResult, reuse: bool = False) -> list[tuple[str, Any]]:
    """The document's members in order; "groups" and "candidates" are iterators of their entries.
    With ``reuse`` (for a writer that only reads them), groups' entries share what they show alike."""
    summary = fleet.summary
    judged = len(fleet.hosts) - summary["unknown"]
    groups: Iterator[dict[str, Any]] = map(_Groups(reuse).entry, fleet.groups)
    candidates: Iterator[Optional[dict[str, Any]]] = (_coverage(c, judged) for c in fleet.candidates)
    return [
        ("schema", FLEET_SCHEMA),
        ("kind", "fleet"),
        ("target", target_payload(fleet.request)),
        ("hosts", len(fleet.hosts)),
        ("summary", summary),
        ("groups", groups),
        ("fleet_recommendation", _coverage(fleet.answer, judged)),
        ("candidates", candidates),
        ("duplicates", [{"host": d.name, "sources": list(d.sources)} for d in fleet.duplicates]),
        ("errors", [{"source": p.source, "error": p.error} for p in fleet.problems]),
    ]


def fleet_payload(fleet: FleetResult) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, Iterator) else value for key, value in fleet_members(fleet)}
