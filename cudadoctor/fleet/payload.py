"""The fleet as one JSON document (cudadoctor/schemas/fleet.schema.json) and as plain text lines.
Pure: a FleetResult in, JSON types or strings out; the CLI prints them."""

from __future__ import annotations

from typing import Any, Optional

from ..doctor.request import Request
from .judge import Coverage, FleetResult, HostGroup

FLEET_SCHEMA = 1
SHOWN_NAMES = 5  # text: this many names of a group, then "and N more"


def target_payload(request: Request) -> dict[str, Any]:
    return {
        "torch": request.release.version,
        "family": request.ngc.name if request.ngc is not None else request.family.name,
        "variant": request.variant.name if request.variant is not None else None,
        "image": str(request.image) if request.image is not None else None,
    }


def _group(group: HostGroup) -> dict[str, Any]:
    rec = group.result.recommendation if group.result is not None else None
    target = group.result.target if group.result is not None else None
    return {
        "hosts": list(group.names),
        "count": len(group.hosts),
        "verdict": group.verdict,
        "findings": list(group.blocking),
        "driver": group.driver,
        "cuda_driver": group.facts.driver.cuda_driver_version if group.facts is not None else None,
        "gpus": [{"name": k.name, "compute_capability": k.compute_capability, "count": k.count} for k in group.gpu_kinds],
        "os": group.os,
        "missing": list(group.missing),
        "sources": sorted({h.origin for h in group.hosts}),
        "target": None if target is None else {"variant": target.variant, "cuda": target.cuda, "image": target.image},
        "recommendation": None
        if rec is None
        else {"torch": rec.torch, "variant": rec.variant, "cuda": rec.cuda, "image": rec.image, "support": rec.support},
        "fix": group.fix,
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
        "left_out": [{"hosts": list(left.hosts), "count": len(left.hosts), "findings": list(left.findings)} for left in coverage.left_out],
    }


def fleet_payload(fleet: FleetResult) -> dict[str, Any]:
    summary = fleet.summary
    judged = len(fleet.hosts) - summary["unknown"]
    return {
        "schema": FLEET_SCHEMA,
        "kind": "fleet",
        "target": target_payload(fleet.request),
        "hosts": len(fleet.hosts),
        "summary": summary,
        "groups": [_group(g) for g in fleet.groups],
        "fleet_recommendation": _coverage(fleet.answer, judged),
        "candidates": [_coverage(c, judged) for c in fleet.candidates],
        "duplicates": [{"host": d.name, "sources": list(d.sources)} for d in fleet.duplicates],
        "errors": [{"source": p.source, "error": p.error} for p in fleet.problems],
    }


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:SHOWN_NAMES])
    more = len(names) - SHOWN_NAMES
    return f"{shown} and {more} more" if more > 0 else shown


def _describe(group: HostGroup) -> str:
    if group.facts is None:
        return "no NVIDIA GPU labels"
    gpus = ", ".join(
        f"{k.count}x {k.name or 'GPU'} (cc {k.compute_capability or '?'})" for k in group.gpu_kinds
    ) or "no GPU"
    parts = [f"driver {group.driver or 'unknown'}", gpus]
    if group.os:
        parts.append(group.os)
    return "; ".join(parts)


def fleet_text(fleet: FleetResult) -> list[str]:
    """The fleet report as lines of plain text (names, codes and fixes as the data has them)."""
    s = fleet.summary
    target = fleet.request
    what = str(target.image) if target.image is not None else f"PyTorch {target.release.version}" + (
        f" {target.variant.name}" if target.variant is not None else ""
    )
    family = target.ngc.name if target.ngc is not None else target.family.name
    if target.ngc is not None and target.image is None:
        what = "the newest NGC month"
    lines = [
        f"Fleet: {len(fleet.hosts)} hosts in {len(fleet.groups)} groups, judged for {what} ({family})",
        f"  ok {s['ok']}, warn {s['warn']}, fail {s['fail']}, unknown {s['unknown']}",
        "",
    ]
    for group in fleet.groups:
        lines.append(f"[{group.verdict}] {len(group.hosts)} host(s): {_describe(group)}")
        lines.append(f"    hosts: {_names(group.names)}")
        if group.blocking:
            lines.append(f"    findings: {', '.join(group.blocking)}")
        rec = group.result.recommendation if group.result is not None else None
        if rec is not None and rec.found:
            lines.append(f"    fits: {rec.variant} ({rec.image or 'wheel'})")
        if group.fix:
            lines.append(f"    fix: {group.fix}")
        if group.facts is not None and group.missing:
            lines.append(f"    not known from the source: {', '.join(group.missing)}")
    answer = fleet.answer
    lines.append("")
    if answer is None:
        lines.append("Fleet answer: nothing to judge (no host carries GPU facts)")
    else:
        judged = len(fleet.hosts) - s["unknown"]
        name = answer.image or answer.variant or "the target"
        lines.append(f"Fleet answer: {name} ({answer.variant}) runs on {answer.hosts} of {judged} judged hosts")
        for left in answer.left_out:
            lines.append(f"    left out: {_names(left.hosts)}: {', '.join(left.findings) or left.verdict}")
    for dup in fleet.duplicates:
        lines.append(f"duplicate host name {dup.name!r} in {', '.join(dup.sources)}: each copy is judged and counted")
    return lines
