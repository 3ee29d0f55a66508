"""Rich output for people: one status line per check, grouped, hints under problems.

Colour follows rich's rules: off when stdout is not a terminal and under NO_COLOR.
"""

from __future__ import annotations

import re
import sys
from typing import Iterable, Optional, TextIO

from rich.console import Console
from rich.markup import escape

from ..doctor import CheckResult
from ..findings import FAIL, INFO, OK, WARN, Finding
from ..recommend import Recommendation
from .payload import pip_command

_STYLE = {OK: "green", INFO: "blue", WARN: "yellow", FAIL: "bold red"}
_UNICODE = {OK: "✓", INFO: "i", WARN: "!", FAIL: "✗"}
_ASCII = {OK: "+", INFO: "i", WARN: "!", FAIL: "x"}
_GROUPS = (
    ("nvml", "Driver (NVML)"),
    ("system", "Kernel module and devices"),
    ("gpu", "GPUs"),
    ("driver", "Driver vs target CUDA"),
    ("environment", "Environment"),
    ("docker", "Docker"),
    ("image", "Image"),
    ("torch", "Installed torch"),
)


def make_console(file: Optional[TextIO] = None) -> Console:
    stream = file or sys.stdout
    # Piped output keeps whole lines (greppable logs); a terminal gets rich's wrapping.
    interactive = hasattr(stream, "isatty") and stream.isatty()
    return Console(file=stream, highlight=False, soft_wrap=not interactive, emoji=False)


def _marks(console: Console) -> dict[str, str]:
    return _UNICODE if (console.encoding or "").lower().startswith("utf") else _ASCII


_GPU_LABEL = re.compile(r"\bGPU (\d+) \(")


def _index_ranges(indexes: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5"."""
    runs: list[list[int]] = []
    for index in indexes:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def collapse_identical_gpus(findings: Iterable[Finding]) -> list[Finding]:
    """Eight identical GPUs get one line ("GPUs 0-7 (...)") instead of eight."""
    groups: dict[tuple[str, str, str, str, str], list[Finding]] = {}
    order: list[object] = []
    for f in findings:
        if f.gpu_index is None or not _GPU_LABEL.search(f.title):
            order.append(f)
            continue
        key = (f.code, f.severity, _GPU_LABEL.sub("GPU * (", f.title), f.detail, f.hint)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(f)
    result = []
    for item in order:
        if isinstance(item, Finding):
            result.append(item)
            continue
        members = groups[item]
        if len(members) == 1:
            result.append(members[0])
            continue
        label = "GPUs " + _index_ranges(sorted(m.gpu_index for m in members if m.gpu_index is not None)) + " ("
        first = members[0]
        result.append(Finding(first.code, first.severity, _GPU_LABEL.sub(label, first.title, count=1), first.detail, first.hint, first.source, first.subject))
    return result


def render_findings(console: Console, findings: Iterable[Finding]) -> None:
    marks = _marks(console)
    findings = collapse_identical_gpus(findings)
    known = {key for key, _ in _GROUPS}
    groups = list(_GROUPS) + sorted({(f.subject, f.subject.title()) for f in findings if f.subject not in known})
    for key, heading in groups:
        members = [f for f in findings if f.subject == key]
        if not members:
            continue
        console.print(f"[bold]{escape(heading)}[/bold]")
        for f in members:
            style = _STYLE[f.severity]
            console.print(f"  [{style}]{marks[f.severity]}[/{style}] {escape(f.title)}  [dim]{escape(f.code)}[/dim]")
            if f.severity in (WARN, FAIL) and f.detail:
                console.print(f"      {escape(f.detail)}", style="dim")
            if f.severity in (WARN, FAIL, INFO) and f.hint:
                console.print(f"      [cyan]→[/cyan] {escape(f.hint)}" if marks is _UNICODE else f"      -> {escape(f.hint)}")
        console.print()


def render_recommendation(console: Console, rec: Recommendation, show_rejected: bool = True) -> None:
    if rec.found:
        console.print(f"[bold]Recommended[/bold] for PyTorch {rec.torch}: [bold green]{escape(rec.image or rec.variant or '')}[/bold green]")
        console.print(f"  {escape(rec.why)}.")
        cmd = pip_command(rec)
        if cmd:
            console.print(f"  wheel: {escape(cmd)}")
        if rec.support == "minor-compat":
            console.print("  [yellow]runs under CUDA minor-version compatibility: see driver-minor-compat[/yellow]")
    else:
        console.print(f"[bold]No recommendation[/bold] for PyTorch {rec.torch}: {escape(rec.why)}.")
        for fix in rec.fixes:
            console.print(f"  → {escape(fix)}" if _marks(console) is _UNICODE else f"  -> {escape(fix)}")
    if show_rejected:
        for rejection in rec.rejected:
            console.print(f"  [dim]{escape(rejection.variant)}: {escape(rejection.reason)}[/dim]")


def render_check(console: Console, result: CheckResult) -> None:
    target = result.target
    if target:
        what = target.image or f"PyTorch {target.torch} {target.variant}"
        console.print(f"[bold]cudadoctor check[/bold] — target {escape(what)} (CUDA {target.cuda}, {target.origin})")
        console.print()
    render_findings(console, result.findings)
    render_recommendation(console, result.recommendation)
    console.print()
    counts = {s: sum(1 for f in result.findings if f.severity == s) for s in (FAIL, WARN)}
    verdict = result.verdict
    style = {OK: "bold green", WARN: "bold yellow", FAIL: "bold red"}[verdict]
    label = {OK: "OK", WARN: "OK with warnings", FAIL: "FAIL"}[verdict]
    console.print(f"Verdict: [{style}]{label}[/{style}] ({counts[FAIL]} failing, {counts[WARN]} warnings)")
