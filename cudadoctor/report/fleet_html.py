"""`fleet --format html`: one self-contained page to share: the answer first, the coverage matrix,
the upgrade plan, a chart of hosts by driver branch and verdict (inline SVG), and the groups with
their findings. Inline CSS only: no script, font, image or stylesheet is fetched; it reads at phone
width and in print (media queries). Hosts are shown by group, a few names each, so 10 000 nodes
make a page of the same size as 100. Every value from outside goes through ``_h``: control
characters escaped (model/text.py), then HTML-escaped, quotes included."""

from __future__ import annotations

import html
from typing import Iterable, Optional

from ..fleet.judge import VERDICTS, FleetResult, HostGroup
from ..fleet.matrix import Matrix
from ..fleet.plan import UpgradePlan, describe
from ..model.findings import FAIL, WARN
from ..model.text import escape_control
from .fleet_plan_text import cell_text

SHOWN_HOSTS = 8  # names shown per group; the rest are counted
COLOURS = {"ok": "#2e7d32", "warn": "#f9a825", "fail": "#c62828", "unknown": "#9e9e9e"}

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1100px;
       padding: 1rem; color: #1b1b1b; background: #fff; overflow-wrap: anywhere; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; } h2 { font-size: 1.2rem; margin: 1.6rem 0 .5rem; border-bottom: 1px solid #ddd; }
.answer { border-left: 6px solid #2e7d32; background: #f1f8e9; padding: .6rem 1rem; margin: .5rem 0; }
.answer.bad { border-color: #c62828; background: #ffebee; }
.answer p { margin: .25rem 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .2rem .45rem; text-align: left; white-space: nowrap; }
th { background: #f5f5f5; }
td.ok { background: #e8f5e9; } td.warn { background: #fff8e1; } td.fail { background: #ffebee; color: #8e0000; }
td.num { text-align: right; }
.group { border: 1px solid #ddd; border-radius: 6px; padding: .5rem .8rem; margin: .6rem 0; break-inside: avoid; }
.verdict { font-weight: bold; text-transform: uppercase; padding: 0 .35rem; border-radius: 3px; color: #fff; }
.verdict.ok { background: #2e7d32; } .verdict.warn { background: #f9a825; color: #000; }
.verdict.fail { background: #c62828; } .verdict.unknown { background: #757575; }
.muted { color: #555; } code { font-size: .9em; word-break: break-all; }
ul { margin: .3rem 0; padding-left: 1.3rem; }
svg { max-width: 100%; height: auto; }
@media (max-width: 600px) {
  body { font-size: 14px; padding: .5rem; }
  h1 { font-size: 1.2rem; }
  th, td { padding: .15rem .3rem; }
}
@media print {
  body { max-width: none; font-size: 11pt; }
  .scroll { overflow: visible; }
  h2 { break-after: avoid; }
  table, .group, figure { break-inside: avoid; }
  .answer, td.ok, td.warn, td.fail, .verdict { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def _h(value: object) -> str:
    return html.escape(escape_control(str(value)), quote=True)


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(_h(n) for n in names[:SHOWN_HOSTS])
    more = len(names) - SHOWN_HOSTS
    return f"{shown} <span class=\"muted\">and {more} more</span>" if more > 0 else shown


def _answer(fleet: FleetResult, matrix: Matrix) -> str:
    judged = sum(len(g.hosts) for g in matrix.groups)
    lines = []
    answer = fleet.answer
    if answer is not None:
        build = answer.image or (f"PyTorch {answer.torch} {answer.variant}" if answer.torch else (answer.variant or "the target"))
        lines.append(f"<p id=\"fleet-answer\"><strong>Fleet answer:</strong> <code>{_h(build)}</code> runs on "
                     f"{answer.hosts} of {judged} judged hosts.</p>")
    if matrix.every is not None:
        lines.append(f"<p id=\"every\"><strong>Every host:</strong> PyTorch {_h(matrix.every)} is the newest release that runs on "
                     f"every host able to run PyTorch ({matrix.able} of {judged}).</p>")
    elif matrix.able:
        lines.append(f"<p id=\"every\"><strong>Every host:</strong> no release runs on all {matrix.able} hosts able to run PyTorch.</p>")
    else:
        lines.append("<p id=\"every\"><strong>Every host:</strong> no host runs any release the table knows.</p>")
    if matrix.most is not None:
        lines.append(f"<p id=\"most\"><strong>Most hosts:</strong> PyTorch {_h(matrix.most)} runs on {matrix.most_hosts} of "
                     f"{judged}.</p>")
    if matrix.every is None and matrix.most is not None:
        for index in matrix.left_out(matrix.most):
            group, span = matrix.groups[index], matrix.span(index)
            assert span is not None
            lines.append(f"<p class=\"left-out\">PyTorch {_h(matrix.most)} leaves out {_names(group.names)} "
                         f"<span class=\"muted\">({_h(describe(group))})</span>, which runs PyTorch {_h(span[0])} to {_h(span[1])}.</p>")
    if matrix.runs_none:
        items = "".join(
            f"<li><strong>{_h(r.reason)}</strong>: {_names(matrix.groups[r.group].names)} "
            f"<span class=\"muted\">({_h(describe(matrix.groups[r.group]))})</span>{': ' + _h(r.detail) if r.detail else ''}</li>"
            for r in matrix.runs_none
        )
        lines.append(f"<p><strong>Run no release:</strong></p><ul id=\"runs-none\">{items}</ul>")
    bad = " bad" if matrix.every is None else ""
    return f"<section class=\"answer{bad}\" id=\"answer\">{''.join(lines)}</section>"


def _matrix(matrix: Matrix) -> str:
    head = "".join(f"<th title=\"{_h(describe(g))}\">G{i + 1}</th>" for i, g in enumerate(matrix.groups))
    rows = []
    for row in matrix.rows:
        cells = "".join(f"<td class=\"{_h(c.verdict)}\">{_h(cell_text(c))}</td>" for c in row.cells)
        rows.append(f"<tr><th>{_h(row.torch)}</th><td class=\"num\">{row.ok}</td><td class=\"num\">{row.warn}</td>"
                    f"<td class=\"num\">{row.fail}</td>{cells}</tr>")
    legend = "".join(
        f"<li><strong>G{i + 1}</strong> ({len(g.hosts)} hosts): {_h(describe(g))}: {_names(g.names)}</li>" for i, g in enumerate(matrix.groups)
    )
    return (
        "<h2>Coverage matrix</h2><p class=\"muted\">Each cell is the build the group would use for that release; * runs with "
        "warnings; - fails.</p>"
        f"<div class=\"scroll\"><table id=\"matrix\"><thead><tr><th>release</th><th>ok</th><th>warn</th><th>fail</th>{head}</tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table></div><ul class=\"legend\">{legend}</ul>"
    )


def _plan(plan: UpgradePlan) -> str:
    parts = [f"<h2>Upgrade plan for PyTorch {_h(plan.torch)}</h2>",
             f"<p>Runs on {plan.running} of {plan.judged} judged hosts as they are"
             + (f"; {plan.reachable} after {len(plan.steps)} step(s).</p>" if plan.steps else ".</p>")]
    if plan.steps:
        items = []
        for step in plan.steps:
            groups = "".join(f"<li>{_names(g.names)} <span class=\"muted\">({_h(g.describe)})</span></li>" for g in step.groups)
            items.append(f"<li><strong>{_h(step.branch)}: driver &gt;= {_h(step.min_driver)}</strong> to run {_h(step.variant)} "
                         f"(CUDA {_h(step.cuda)}): +{step.hosts} hosts, {step.running} of {plan.judged}<ul>{groups}</ul></li>")
        parts.append(f"<ol id=\"plan-steps\">{''.join(items)}</ol>")
    if plan.never:
        never = "".join(
            f"<li>{_names(n.group.names)} <span class=\"muted\">({_h(n.group.describe)})</span> <strong>{_h(n.reason)}</strong>: "
            f"{_h(n.detail)}</li>" for n in plan.never
        )
        parts.append(f"<p>No driver upgrade runs it on:</p><ul id=\"plan-never\">{never}</ul>")
    return "".join(parts)


def branch_counts(fleet: FleetResult) -> dict[str, dict[str, int]]:
    """Hosts per driver branch ("R550", "unknown") and verdict, branches in numeric order."""
    counts: dict[str, dict[str, int]] = {}
    for group in fleet.groups:
        driver = group.driver
        head = driver.split(".")[0] if driver else ""
        key = f"R{head}" if head.isdigit() else "unknown"
        bucket = counts.setdefault(key, {v: 0 for v in VERDICTS})
        bucket[group.verdict if group.verdict in bucket else "unknown"] += len(group.hosts)
    return dict(sorted(counts.items(), key=lambda kv: (not kv[0][1:].isdigit(), int(kv[0][1:]) if kv[0][1:].isdigit() else 0)))


def _chart(fleet: FleetResult) -> str:
    counts = branch_counts(fleet)
    widest = max((sum(c.values()) for c in counts.values()), default=0) or 1
    bar, left, row_h = 520, 90, 26
    height = row_h * len(counts) + 40
    shapes = []
    for i, (branch, by_verdict) in enumerate(counts.items()):
        y = 10 + i * row_h
        shapes.append(f"<text x=\"{left - 8}\" y=\"{y + 15}\" text-anchor=\"end\" font-size=\"13\">{_h(branch)}</text>")
        x = float(left)
        for verdict in VERDICTS:
            n = by_verdict[verdict]
            if not n:
                continue
            w = bar * n / widest
            shapes.append(f"<rect x=\"{x:.1f}\" y=\"{y}\" width=\"{w:.1f}\" height=\"20\" fill=\"{COLOURS[verdict]}\">"
                          f"<title>{_h(branch)}: {n} {verdict}</title></rect>")
            x += w
        shapes.append(f"<text x=\"{x + 6:.1f}\" y=\"{y + 15}\" font-size=\"12\">{sum(by_verdict.values())}</text>")
    legend_y = height - 12
    for j, verdict in enumerate(VERDICTS):
        shapes.append(f"<rect x=\"{left + j * 90}\" y=\"{legend_y - 10}\" width=\"12\" height=\"12\" fill=\"{COLOURS[verdict]}\"/>"
                      f"<text x=\"{left + j * 90 + 16}\" y=\"{legend_y}\" font-size=\"12\">{verdict}</text>")
    return (
        "<h2>Hosts by driver branch and verdict</h2><figure>"
        f"<svg id=\"branch-chart\" viewBox=\"0 0 {left + bar + 60} {height}\" role=\"img\" "
        f"aria-label=\"hosts by driver branch and verdict\">{''.join(shapes)}</svg></figure>"
    )


def _findings(group: HostGroup) -> str:
    if group.result is None:
        return ""
    seen: dict[str, str] = {}
    for finding in group.result.findings:
        if finding.severity in (FAIL, WARN):
            seen.setdefault(finding.code, f"<li class=\"{_h(finding.severity)}\"><code>{_h(finding.code)}</code> {_h(finding.title)}</li>")
    return f"<ul>{''.join(seen.values())}</ul>" if seen else ""


def _groups(fleet: FleetResult) -> str:
    parts = ["<h2>Groups</h2>"]
    for i, group in enumerate(fleet.groups):
        rec = group.result.recommendation if group.result is not None else None
        fits = f"<p>fits: PyTorch {_h(rec.torch)} {_h(rec.variant)} ({_h(rec.image or 'wheel')})</p>" if rec is not None and rec.found else ""
        fix = f"<p><strong>fix:</strong> {_h(group.fix)}</p>" if group.fix else ""
        parts.append(
            f"<div class=\"group\" id=\"group-{i + 1}\"><p><span class=\"verdict {_h(group.verdict)}\">{_h(group.verdict)}</span> "
            f"{len(group.hosts)} host(s): {_h(describe(group))}</p><p class=\"muted\">hosts: {_names(group.names)}</p>"
            f"{fits}{_findings(group)}{fix}</div>"
        )
    return "".join(parts)


def fleet_html(fleet: FleetResult, matrix: Matrix, plan: UpgradePlan, version: Optional[str] = None,
               title: str = "cudadoctor fleet report") -> str:
    """The page, complete (doctype to closing tag)."""
    s = fleet.summary
    counts = ", ".join(f"{v} {s[v]}" for v in VERDICTS)
    body: Iterable[str] = (
        f"<h1>{_h(title)}</h1>",
        f"<p class=\"muted\">{len(fleet.hosts)} hosts in {len(fleet.groups)} groups ({counts}); cudadoctor {_h(version or '')}</p>",
        _answer(fleet, matrix),
        _matrix(matrix),
        _plan(plan),
        _chart(fleet),
        _groups(fleet),
    )
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>{_h(title)}</title><style>{CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )
