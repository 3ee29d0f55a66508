"""Rich output for people: one status line per finding, grouped as the checks declare, hints
under problems. Everything is printed as text, never as markup (see report/console.py)."""

from __future__ import annotations

from typing import Iterable, Sequence, Union

from rich.console import Console
from rich.text import Text

from ..doctor.check import CheckResult
from ..host.view import gpu_label
from ..model.facts import GpuFacts
from ..model.findings import FAIL, INFO, OK, WARN, Finding
from ..model.record import replace
from ..recommend import Recommendation
from ..rules import GROUPS
from .console import indented, make_console, symbols
from .payload import pip_command

__all__ = ["make_console", "render_check", "render_findings", "render_recommendation", "collapse_identical_gpus"]

_STYLE = {OK: "green", INFO: "blue", WARN: "yellow", FAIL: "bold red"}
_MARK = {OK: "ok", INFO: "info", WARN: "warn", FAIL: "fail"}  # severity -> its symbol's name (console.symbols)


def _index_ranges(indexes: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2, 5"."""
    runs: list[list[int]] = []
    for index in indexes:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def collapse_identical_gpus(findings: Iterable[Finding], gpus: Sequence[GpuFacts]) -> list[Finding]:
    """Eight identical GPUs get one line ("GPUs 0-7 (...)") instead of eight.

    Two findings collapse when they differ only in which GPU they are about: same code, severity,
    detail and hint, and the same title once the GPU's own label (``gpu_label``, from the facts)
    is taken out of it.
    """
    labels = {gpu.index: gpu_label(gpu) for gpu in gpus}
    groups: dict[tuple[str, ...], list[Finding]] = {}
    order: list[Union[Finding, tuple[str, ...]]] = []
    for f in findings:
        label = labels.get(f.gpu_index) if f.gpu_index is not None else None
        if label is None or label not in f.title:
            order.append(f)
            continue
        name = label[label.index("(") :]  # "(NVIDIA H100 80GB HBM3)"
        key = (f.code, f.severity, f.title.replace(label, "\0", 1), name, f.detail, f.hint, f.group)
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
        first = members[0]
        if len(members) == 1:
            result.append(first)
            continue
        indexes = sorted(m.gpu_index for m in members if m.gpu_index is not None)
        label = labels[first.gpu_index] if first.gpu_index is not None else ""
        merged = f"GPUs {_index_ranges(indexes)} {label[label.index('('):]}"
        result.append(replace(first, title=first.title.replace(label, merged, 1), gpu_index=None))
    return result


def _line(*parts: tuple[str, str]) -> Text:
    return Text.assemble(*parts)


def render_findings(console: Console, findings: Iterable[Finding], gpus: Sequence[GpuFacts] = ()) -> None:
    shown = symbols(console)
    marks = {severity: shown[name] for severity, name in _MARK.items()}
    arrow = shown["arrow"]
    collapsed = collapse_identical_gpus(findings, gpus)
    known = {key for key, _ in GROUPS}
    extra = sorted({(f.group, f.group.title()) for f in collapsed if f.group not in known})
    for key, heading in list(GROUPS) + extra:
        members = [f for f in collapsed if f.group == key]
        if not members:
            continue
        console.print(Text(heading, style="bold"))
        for f in members:
            console.print(_line(("  ", ""), (marks[f.severity], _STYLE[f.severity]), (f" {f.title}  ", ""), (f.code, "dim")))
            if f.severity in (WARN, FAIL) and f.detail:
                console.print(indented(f"      {f.detail}", "dim"))
            if f.severity in (WARN, FAIL, INFO) and f.hint:
                console.print(_line(("      ", ""), (arrow, "cyan"), (f" {f.hint}", "")))
        console.print()


def render_recommendation(console: Console, rec: Recommendation, show_rejected: bool = True) -> None:
    arrow = symbols(console)["arrow"]
    if rec.found:
        console.print(_line(("Recommended", "bold"), (f" for PyTorch {rec.torch}: ", ""), (rec.image or rec.variant or "", "bold green")))
        console.print(Text(f"  {rec.why}."))
        cmd = pip_command(rec)
        if cmd:
            console.print(Text(f"  wheel: {cmd}"))
        if rec.support == "minor-compat":
            console.print(indented("  runs under CUDA minor-version compatibility: see driver-minor-compat", "yellow"))
    else:
        console.print(_line(("No recommendation", "bold"), (f" for PyTorch {rec.torch}: {rec.why}.", "")))
        for fix in rec.fixes:
            console.print(Text(f"  {arrow} {fix}"))
    if show_rejected:
        for rejection in rec.rejected:
            console.print(indented(f"  {rejection.variant}: {rejection.reason}", "dim"))


def render_check(console: Console, result: CheckResult) -> None:
    target = result.target
    if target:
        what = target.image or f"PyTorch {target.torch} {target.variant}"
        dash = symbols(console)["dash"]
        console.print(_line(("cudadoctor check", "bold"), (f" {dash} target {what} (CUDA {target.cuda}, {target.origin})", "")))
        console.print()
    render_findings(console, result.findings, result.facts.gpus)
    render_recommendation(console, result.recommendation)
    console.print()
    counts = {s: sum(1 for f in result.findings if f.severity == s) for s in (FAIL, WARN)}
    verdict = result.verdict
    style = {OK: "bold green", WARN: "bold yellow", FAIL: "bold red"}[verdict]
    label = {OK: "OK", WARN: "OK with warnings", FAIL: "FAIL"}[verdict]
    console.print(_line(("Verdict: ", ""), (label, style), (f" ({counts[FAIL]} failing, {counts[WARN]} warnings)", "")))
