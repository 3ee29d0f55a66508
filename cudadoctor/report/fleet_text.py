"""`cudadoctor fleet`'s text: the fleet's counts, each group of hosts with its verdict, findings and
fix, then the fleet's answer. Printed through the report's Printer (report/layout.py), so lines
wrap under their own indent at the terminal's width and a command in a fix is never cut; piped
output keeps each line whole."""

from __future__ import annotations

from rich.console import Console

from ..fleet.judge import FleetResult, HostGroup
from .layout import Printer

SHOWN_NAMES = 5  # this many names of a group, then "and N more"
_VERDICT_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "unknown": "dim"}


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


def _group(out: Printer, group: HostGroup) -> None:
    out.line((f"[{group.verdict}]", _VERDICT_STYLE.get(group.verdict, "")), (f" {len(group.hosts)} host(s): {_describe(group)}", ""),
             hanging=4)
    out.line(("hosts: ", "dim"), (_names(group.names), ""), indent=4, hanging=6)
    if group.blocking:
        out.line(("findings: ", "dim"), (", ".join(group.blocking), ""), indent=4, hanging=6)
    rec = group.result.recommendation if group.result is not None else None
    if rec is not None and rec.found:
        out.line(("fits: ", "dim"), (f"PyTorch {rec.torch} {rec.variant} ({rec.image or 'wheel'})", ""), indent=4, hanging=6)
    if group.fix:
        out.line(("fix: ", "bold"), (group.fix, ""), indent=4, hanging=6)
    if group.facts is not None and group.missing:
        out.line((f"not known from the source: {', '.join(group.missing)}", "dim"), indent=4, hanging=6)


def _answer(out: Printer, fleet: FleetResult) -> None:
    """The fleet's answer first: the build that covers the most hosts, how many it leaves out, and
    the change that would bring each group of them in."""
    answer = fleet.answer
    s = fleet.summary
    if answer is None:
        out.line(("Fleet answer: ", "bold"), ("nothing to judge (no host carries GPU facts)", ""), hanging=2)
        return
    judged = len(fleet.hosts) - s["unknown"]
    release = f"PyTorch {answer.torch} {answer.variant}" if answer.torch else (answer.variant or "the target")
    name = answer.image or release
    about = f" ({release})" if answer.image and answer.torch else ""
    if answer.image is None and answer.torch and fleet.request.family.offers_wheels:
        about = f" (wheels: the {fleet.request.family.name} family has no image of it)"
    out.line(("Fleet answer: ", "bold"), (name, "bold green"), (f"{about} runs on {answer.hosts} of {judged} judged hosts", ""), hanging=2)
    left = sum(len(group.hosts) for group in answer.left_out)
    if left:
        out.line((f"It leaves out {left}:", ""), indent=2)
        for group in answer.left_out:
            change = group.fix or ", ".join(group.findings) or group.verdict
            out.line((f"{_names(group.hosts)}: ", "dim"), (change, ""), indent=4, hanging=6)


def render_fleet(console: Console, fleet: FleetResult) -> None:
    """The fleet report, the answer first (names, codes and fixes as the data has them)."""
    out = Printer(console)
    _answer(out, fleet)
    out.blank()
    s = fleet.summary
    target = fleet.request
    what = str(target.image) if target.image is not None else f"PyTorch {target.release.version}" + (
        f" {target.variant.name}" if target.variant is not None else ""
    )
    if target.family.judges_newest(target):
        what = target.family.newest_words
    family = target.family.name
    out.line((f"Fleet: {len(fleet.hosts)} hosts in {len(fleet.groups)} groups, judged for {what} ({family})", "bold"))
    out.line((f"ok {s['ok']}, warn {s['warn']}, fail {s['fail']}, unknown {s['unknown']}", ""), indent=2)
    out.blank()
    for group in fleet.groups:
        _group(out, group)
    for dup in fleet.duplicates:
        out.line((f"duplicate host name {dup.name!r} in {', '.join(dup.sources)}: each copy is judged and counted", "yellow"),
                 hanging=2)
