"""The coverage matrix and the upgrade plan as JSON (the fleet document's ``matrix`` and ``plan``
keys, present with --matrix and --plan; cudadoctor/schemas/fleet.schema.json). Pure."""

from __future__ import annotations

from typing import Any

from .matrix import Matrix
from .plan import PlanGroup, UpgradePlan, describe


def matrix_payload(matrix: Matrix) -> dict[str, Any]:
    return {
        "every": matrix.every,
        "most": matrix.most,
        "most_hosts": matrix.most_hosts,
        "able": matrix.able,
        "judged": sum(len(g.hosts) for g in matrix.groups),
        "unjudged": matrix.unjudged,
        "left_out": [f"G{i + 1}" for i in (matrix.left_out(matrix.most) if matrix.most is not None else ())],
        "groups": [
            {"id": f"G{i + 1}", "hosts": list(g.names), "count": len(g.hosts), "describe": describe(g), "driver": g.driver,
             "oldest": span[0] if span else None, "newest": span[1] if span else None}
            for i, g in enumerate(matrix.groups) for span in (matrix.span(i),)
        ],
        "releases": [
            {
                "torch": row.torch,
                "ok": row.ok,
                "warn": row.warn,
                "fail": row.fail,
                "cells": [
                    {"verdict": c.verdict, "variant": c.variant, "cuda": c.cuda, "support": c.support, "image": c.image}
                    for c in row.cells
                ],
            }
            for row in matrix.rows
        ],
        "runs_none": [
            {"group": f"G{r.group + 1}", "hosts": list(matrix.groups[r.group].names), "count": len(matrix.groups[r.group].hosts),
             "reason": r.reason, "findings": list(r.findings), "detail": r.detail}
            for r in matrix.runs_none
        ],
    }


def _group(group: PlanGroup) -> dict[str, Any]:
    return {"hosts": list(group.names), "count": len(group.names), "describe": group.describe}


def plan_payload(plan: UpgradePlan) -> dict[str, Any]:
    return {
        "torch": plan.torch,
        "judged": plan.judged,
        "running": plan.running,
        "reachable": plan.reachable,
        "steps": [
            {
                "branch": s.branch, "min_driver": s.min_driver, "full_driver": s.full_driver, "support": s.support, "variant": s.variant, "cuda": s.cuda,
                "image": s.image, "hosts": s.hosts, "running": s.running, "groups": [_group(g) for g in s.groups],
            }
            for s in plan.steps
        ],
        "never": [
            {**_group(n.group), "reason": n.reason, "findings": list(n.findings), "detail": n.detail}
            for n in plan.never
        ],
    }
