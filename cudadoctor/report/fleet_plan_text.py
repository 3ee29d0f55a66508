"""`fleet --matrix` and `fleet --plan` as text: the answer lines first, then the matrix (releases
down, groups across, each cell the build the group would use), then the upgrade plan's steps."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from ..fleet.matrix import Cell, Matrix
from ..fleet.plan import UpgradePlan, describe
from .fleet_text import SHOWN_NAMES
from .layout import Printer

FAIL_MARK = "-"
WARN_MARK = "*"


def names_shown(names: tuple[str, ...]) -> str:
    more = len(names) - SHOWN_NAMES
    shown = ", ".join(names[:SHOWN_NAMES])
    return f"{shown} and {more} more" if more > 0 else shown


def cell_text(cell: Cell) -> str:
    """A cell in a few characters: the build (marked * when it warns), or - where the release fails."""
    if not cell.runs:
        return FAIL_MARK
    build = cell.variant or "runs"
    return build + WARN_MARK if cell.verdict == "warn" else build


def _answer(out: Printer, matrix: Matrix, hosts: int) -> None:
    judged = sum(len(g.hosts) for g in matrix.groups)
    if matrix.every is not None:
        out.line(("Every host: ", "bold"), (f"PyTorch {matrix.every}", "bold green"),
                 (f" is the newest release that runs on every host able to run PyTorch ({matrix.able} of {judged} judged)", ""), hanging=2)
    elif matrix.able:
        out.line(("Every host: ", "bold"), (f"no release runs on all {matrix.able} hosts able to run PyTorch", "bold red"), hanging=2)
    else:
        out.line(("Every host: ", "bold"), ("no host runs any release the table knows", "bold red"), hanging=2)
    if matrix.most is not None:
        out.line(("Most hosts: ", "bold"), (f"PyTorch {matrix.most}", "bold green"),
                 (f" runs on {matrix.most_hosts} of {judged} judged hosts (the newest among equals)", ""), hanging=2)
    if matrix.every is None and matrix.most is not None:
        for index in matrix.left_out(matrix.most):
            group, span = matrix.groups[index], matrix.span(index)
            assert span is not None
            out.line((f"PyTorch {matrix.most} leaves out ", ""), (names_shown(group.names), ""),
                     (f" ({describe(group)}), which runs PyTorch {span[0]} to {span[1]}", "dim"), indent=2, hanging=4)
    if matrix.runs_none:
        count = sum(len(matrix.groups[r.group].hosts) for r in matrix.runs_none)
        out.line((f"Run no release ({count} hosts):", "bold"))
        for entry in matrix.runs_none:
            group = matrix.groups[entry.group]
            out.line((f"{entry.reason}: ", "yellow"), (f"{names_shown(group.names)} ({describe(group)})", ""),
                     (f": {entry.detail}" if entry.detail else "", "dim"), indent=2, hanging=4)
    if matrix.unjudged:
        out.line((f"Not judged: {matrix.unjudged} hosts whose sources carry no GPU facts", "dim"))


def render_matrix(console: Console, matrix: Matrix, hosts: int) -> None:
    out = Printer(console)
    _answer(out, matrix, hosts)
    if not matrix.groups:
        return
    out.blank()
    labels = [f"G{i + 1}" for i in range(len(matrix.groups))]
    cells = [[cell_text(c) for c in row.cells] for row in matrix.rows]
    widths = [max([len(label)] + [len(r[i]) for r in cells]) for i, label in enumerate(labels)]
    head = f"{'release':<8} {'ok':>5} {'warn':>5} {'fail':>5}  " + "  ".join(label.ljust(w) for label, w in zip(labels, widths))
    console.print(Text(head.rstrip(), style="bold"), soft_wrap=True)
    for row, texts in zip(matrix.rows, cells):
        line = f"{row.torch:<8} {row.ok:>5} {row.warn:>5} {row.fail:>5}  " + "  ".join(t.ljust(w) for t, w in zip(texts, widths))
        console.print(Text(line.rstrip()), soft_wrap=True)
    out.line((f"(a cell is the build the group would use; {WARN_MARK}: it runs with warnings; {FAIL_MARK}: the release fails there)", "dim"))
    out.blank()
    for label, group in zip(labels, matrix.groups):
        out.line((f"{label} ", "bold"), (f"{len(group.hosts)} host(s): {describe(group)}: ", ""), (names_shown(group.names), "dim"),
                 indent=2, hanging=6)


def render_plan(console: Console, plan: UpgradePlan) -> None:
    out = Printer(console)
    after = f"; {plan.reachable} after {len(plan.steps)} step(s)" if plan.steps else ""
    out.line(("Upgrade plan ", "bold"), (f"for PyTorch {plan.torch}", "bold green"),
             (f": runs on {plan.running} of {plan.judged} judged hosts as they are{after}", ""), hanging=2)
    for number, step in enumerate(plan.steps, 1):
        if step.full_driver and step.full_driver != step.min_driver:
            full = f", full support from {step.full_driver}"
        elif step.support != "full" and not step.full_driver:
            full = ", through minor-version compatibility only: no driver these GPUs run supports it fully"
        else:
            full = ""
        out.line((f"{number}. {step.branch}: ", "bold"), (f"driver >= {step.min_driver}", "bold"),
                 (f" to run {step.variant} (CUDA {step.cuda}{full}): +{step.hosts} hosts, {step.running} of {plan.judged}", ""),
                 indent=2, hanging=5)
        for group in step.groups:
            out.line((f"{names_shown(group.names)} ", ""), (f"({group.describe})", "dim"), indent=5, hanging=7)
    if plan.never:
        out.line((f"No driver upgrade runs PyTorch {plan.torch} on:", "bold"), indent=2)
        for entry in plan.never:
            out.line((f"{names_shown(entry.group.names)} ", ""), (f"({entry.group.describe}) ", "dim"), (f"{entry.reason}: ", "yellow"),
                     (entry.detail, ""), indent=5, hanging=7)
    if not plan.judged:
        out.line(("nothing to plan: no host carries GPU facts", "dim"), indent=2)
    elif not plan.steps and not plan.never:
        out.line(("nothing to upgrade: every judged host runs it", "green"), indent=2)
