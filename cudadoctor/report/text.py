"""Text for people, the answer first: the verdict and the one thing to do, then the details (the
failing and warning findings, grouped as the checks declare, each with its detail and hint), each
fact once. Quiet prints the answer only; verbose adds the ok and info findings and every variant.

Lines are wrapped here (report/layout.py), commands are printed whole on lines of their own, and
everything is printed as text, never as markup (see report/console.py)."""

from __future__ import annotations

import re

from typing import Iterable, Optional, Sequence, Union

from rich.console import Console

from ..compat.table import CONVENTION_FAMILY
from ..doctor.answer import FIX, FIX_FIRST, USE, USE_INSTEAD, Answer, Build, Fix, pip_command, pip_line
from ..doctor.check import CheckResult
from ..host.view import gpu_label
from ..model.facts import GpuFacts
from ..model.findings import FAIL, INFO, OK, WARN, Finding
from ..model.record import replace
from ..model.target import Target
from ..recommend import Recommendation
from ..rules import GROUPS
from .console import make_console, symbols
from .layout import Printer, Segment

QUIET, NORMAL, VERBOSE = -1, 0, 1

__all__ = [
    "QUIET", "NORMAL", "VERBOSE", "make_console", "render_check", "render_findings", "render_recommendation",
    "collapse_identical_gpus",
]

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


_LABEL = {OK: "OK", WARN: "OK with warnings", FAIL: "FAIL"}
_VERDICT_STYLE = {OK: "bold green", WARN: "bold yellow", FAIL: "bold red"}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _build_words(build: Build, newest: bool = False) -> list[Segment]:
    """"pytorch/pytorch:... (PyTorch 2.13 cu126, CUDA 12.6)" or "PyTorch 2.14 cu126 (CUDA 12.6)", with
    how the driver runs it and why this release, as styled pieces."""
    if build.image and "." in build.variant:  # an NGC month (23.10): its variant is the month
        what, about = build.image, f"NGC {build.variant}: PyTorch {build.torch or 'not recorded'}, CUDA {build.cuda}"
    elif build.image:
        what, about = build.image, f"PyTorch {build.torch} {build.variant}, CUDA {build.cuda}"
    else:
        what, about = f"PyTorch {build.torch} {build.variant}", f"CUDA {build.cuda}"
    if build.support == "minor-compat":
        about += ", through minor-version compatibility"
    elif build.support == "forward-compat":
        about += ", through CUDA forward compatibility"
    elif build.support == "unknown":
        about += f"; needs driver >= {build.needs_driver}" if build.needs_driver else "; the driver is not known"
    why = ", the newest release that runs here" if newest else ""
    return [(what, "bold green"), (f" ({about}){why}", "")]


_DOWNLOAD = "no pip command on PyTorch's page for this release's wheel; download it for your Python from "


def _install_lines(out: Printer, build: Build) -> None:
    """The build's pip command; for a 1.0/1.1 wheel that PyTorch documents only as a download, its page."""
    if build.pip_command:
        out.command(build.pip_command)
    elif build.wheel_page_url:
        out.line((_DOWNLOAD, ""), (build.wheel_page_url, ""), hanging=2)


def _build_lines(out: Printer, lead: str, build: Build, newest: bool = False, explained: Optional[str] = None) -> None:
    """"<lead> <build>", the wheel's pip command under it, and minor-version compatibility
    explained where the build relies on it."""
    out.line((lead, "bold"), (" ", ""), *_build_words(build, newest), hanging=2)
    _install_lines(out, build)
    if explained:
        out.line((explained, ""), hanging=2)


def render_findings(
    console: Console, findings: Iterable[Finding], gpus: Sequence[GpuFacts] = (), verbosity: int = NORMAL, out: Optional[Printer] = None
) -> int:
    """The findings by group; by default only those that warn or fail. Returns how many were hidden."""
    out = out or Printer(console)
    syms = symbols(console)
    marks = {severity: syms[name] for severity, name in _MARK.items()}
    arrow = syms["arrow"]
    collapsed = collapse_identical_gpus(findings, gpus)
    shown = [f for f in collapsed if verbosity >= VERBOSE or f.severity in (WARN, FAIL)]
    known = {key for key, _ in GROUPS}
    extra = sorted({(f.group, f.group.title()) for f in shown if f.group not in known})
    for key, heading in list(GROUPS) + extra:
        members = [f for f in shown if f.group == key]
        if not members:
            continue
        out.line((heading, "bold"))
        for f in members:
            out.line((marks[f.severity], _STYLE[f.severity]), (f" {f.title}", ""), indent=2, hanging=4, tail=[(f.code, "dim")])
            if f.severity in (WARN, FAIL) and f.detail:
                out.line((f.detail, "dim"), indent=6, hanging=6)
            if f.hint:
                out.line((arrow, "cyan"), (f" {f.hint}", ""), indent=6, hanging=8)
        out.blank()
    return len(collapsed) - len(shown)


def _others_heading(rec: Recommendation, other: bool) -> str:
    """The heading over the rejected builds: an NGC family's months are not variants of a PyTorch release."""
    if rec.rejected and all(re.match(r"^\d{2}\.\d{2}$", r.variant) for r in rec.rejected):
        return f"{'Other months' if other else 'Months'} of the NGC family {rec.family}"
    return f"{'Other variants' if other else 'Variants'} of PyTorch {rec.torch}"


def render_recommendation(console: Console, rec: Recommendation, show_rejected: bool = True, wheel: bool = False) -> None:
    """`recommend`'s text: the image (or, for --wheel, the pip command and index URL) first."""
    out = Printer(console)
    arrow = symbols(console)["arrow"]
    if rec.found:
        if wheel:
            command = pip_command(rec)
            if command:
                out.command(command, indent=0, style="bold green")
            elif rec.wheel_page_url:
                out.line((_DOWNLOAD, ""), (rec.wheel_page_url, "bold green"))
            out.line(("index URL: ", ""), (rec.wheel_index_url or "none recorded", ""))
            out.line((f"PyTorch {rec.torch} {rec.variant} (CUDA {rec.cuda}): {rec.why}.", ""))
        else:
            out.line((rec.image or rec.variant or "", "bold green"), (f" (PyTorch {rec.torch} {rec.variant}, CUDA {rec.cuda})", ""))
            out.line((f"{rec.why[:1].upper()}{rec.why[1:]}.", ""), indent=2)
            command = pip_command(rec)
            if command:
                out.line(("the same build as a wheel:", "dim"), indent=2)
                out.command(command, indent=4)
    else:
        out.line(("No recommendation", "bold"), (f" for PyTorch {rec.torch}: {rec.why}.", ""))
        for fix in rec.fixes:
            out.line((arrow, "cyan"), (f" {fix}", ""), indent=2, hanging=4)
    if rec.newest is not None:
        newest = rec.newest
        what = "the newest release with an image that runs here" if not wheel else "the newest release that runs here"
        out.line((f"PyTorch {rec.torch} is {what}; PyTorch {newest.torch} {newest.needs()[0]} (add --torch {newest.torch} for its details).", ""),
                 indent=2, hanging=4)
    if show_rejected and rec.rejected:
        out.line((f"{_others_heading(rec, other=True)}:", "dim"))
        for rejection in rec.rejected:
            out.line((f"{rejection.variant}: {rejection.reason}", "dim"), indent=2, hanging=4)
    for note in rec.caveats:  # what may change the answer (every note: --format json)
        out.line((f"note: {note}", "yellow"), indent=2, hanging=4)
    if not wheel and _is_convention(rec.family, rec.image if rec.found else None):
        out.line((convention_note(), "dim"))


def render_no_fit(console: Console, rec: Recommendation, wheel: bool = False) -> None:
    """`recommend` when nothing fits (on stderr): the release that fits instead first, then why
    this one does not, the fixes, and each variant's reason."""
    out = Printer(console)
    alternative = rec.alternative
    if alternative is not None and alternative.found:
        what = alternative.wheel_index_url if wheel else alternative.image
        out.line((f"cudadoctor: no fit for PyTorch {rec.torch}; PyTorch {alternative.torch} fits: {what} (add --torch {alternative.torch})", ""))
        out.line((f"PyTorch {rec.torch}: {rec.why}", ""), indent=2, hanging=4)
    else:
        out.line((f"cudadoctor: no fit: {rec.why}", ""))
    for fix, action in zip(rec.fixes, rec.actions):
        if action.action != "use-release" or alternative is None:
            out.line((f"fix: {fix}", ""), indent=2, hanging=4)
    for rejection in rec.rejected:
        out.line((f"{rejection.variant}: {rejection.reason}", ""), indent=2, hanging=4)


def _is_convention(family: str, image: Optional[str]) -> bool:
    """A pytorch-cuda reference with no registry in front: a tag the user must build or mirror."""
    return family == CONVENTION_FAMILY and image is not None and image.startswith(f"{CONVENTION_FAMILY}:")


def convention_note() -> str:
    return "note: pytorch-cuda tags are a convention, not published images: set `repository` in config.toml, or use --family pytorch/pytorch"


def _target_words(target: Target) -> str:
    what = target.image or f"PyTorch {target.torch} {target.variant}"
    origin = {
        "default-wheel": "the default wheel's variant",
        "recommendation": "the recommended variant",
        "--variant": "from --variant",
        "--image": "from --image",
    }.get(target.origin, target.origin)
    if target.origin == "--image" and target.run is not None:
        origin = "the image of --run"
    return f"{what} (CUDA {target.cuda or 'not known'}, {origin})"


def render_answer(out: Printer, result: CheckResult, answer: Answer) -> None:
    """The verdict and the one thing to do (doctor/answer.py decides it; this only words it), then
    what the answer rests on that the table does not know (a --torch, installed torch or image
    release newer than it): part of the answer, so `-q` shows it too."""
    _render_verdict(out, result, answer)
    if answer.multi_gpu is not None:
        out.line(("Multi-GPU: ", "bold"), (answer.multi_gpu.text, ""), hanging=2, tail=[(answer.multi_gpu.code, "dim")])
    if answer.newer is not None:
        out.line(("Newer: ", "bold"), (answer.newer.text, ""), hanging=2, tail=[(answer.newer.code, "dim")])
    for f in result.findings:
        if f.code == "table-outdated":
            out.line(("Note: ", "bold"), (f"{f.title}; {f.hint[:1].lower()}{f.hint[1:]}", ""), hanging=6, tail=[(f.code, "dim")])


def _without_cuda_line(out: Printer, fix: Fix) -> None:
    """With no driver or GPU: what the newest build needs, planning and the CPU wheels, with the
    commands whole on lines of their own."""
    action = fix.actions[0].action if fix.actions else ""
    if action == "plan-with-what-if":
        out.line(("- ", "dim"), ("To plan for another machine, give its driver and GPU:", ""), indent=2, hanging=4)
        out.command("cudadoctor check --driver VERSION --gpu MODEL", indent=4)
    elif action == "use-cpu-wheels" and (command := pip_line(fix.actions[0].torch, fix.actions[0].wheel_index_url)):
        out.line(("- ", "dim"), ("For CPU only:", ""), indent=2, hanging=4)
        out.command(command, indent=4)
    else:
        out.line(("- ", "dim"), (fix.text[:1].upper() + fix.text[1:], ""), indent=2, hanging=4)


def _fix_line(out: Printer, fix: Fix, lead: str = "Fix: ", tail_code: bool = True) -> None:
    out.line((lead, "bold"), (fix.text, ""), hanging=len(lead), tail=[(fix.code, "dim")] if fix.code and tail_code else [])


def _render_verdict(out: Printer, result: CheckResult, answer: Answer) -> None:
    findings, target = result.findings, result.target
    verdict = answer.verdict
    fails = [f for f in findings if f.severity == FAIL]
    warns = [f for f in findings if f.severity == WARN]
    label = [(_LABEL[verdict], _VERDICT_STYLE[verdict])]
    counts = []
    if fails:
        counts.append(f"{len(fails)} failing")
    if warns:
        counts.append(_plural(len(warns), "warning"))
    count_words = f" ({', '.join(counts)})" if counts else ""
    build = answer.build
    if answer.problem is not None:
        problem = answer.problem
        out.line(*label, (f"{count_words}: {problem.title}", ""), tail=[(problem.code, "dim")])
    if answer.kind == FIX_FIRST:
        for fix in answer.fixes:
            _fix_line(out, fix, tail_code=fix.code != (answer.problem.code if answer.problem else ""))
        if build is not None:
            _build_lines(out, "Then use:" if not answer.asked else f"Then use PyTorch {build.torch}:", build, answer.newest_that_runs,
                         answer.explained)
        for fix in answer.without_cuda:
            _without_cuda_line(out, fix)
        return
    if answer.kind == USE_INSTEAD and build is not None:
        lead = f"Use PyTorch {build.torch} instead:" if answer.asked else "Use instead:"
        _build_lines(out, lead, build, answer.newest_that_runs, answer.explained)
        for fix in answer.other:
            out.line((f"Or, for PyTorch {answer.asked}: {fix.text}", ""), hanging=2)
        return
    if answer.kind == FIX:
        several = len(answer.fixes) > 1
        for fix in answer.fixes:
            _fix_line(out, fix, tail_code=several)
        if build is not None:
            _build_lines(out, "Then use:", build, explained=answer.explained)
        return
    if answer.kind == USE and build is not None:
        out.line(*label, (f"{count_words}: use ", ""), *_build_words(build, answer.newest_that_runs), hanging=2)
        _install_lines(out, build)
        if answer.explained:
            out.line((answer.explained, ""), hanging=2)
        return
    if target is not None and target.origin == "--require":
        out.line(*label, (f"{count_words}: this host meets {', '.join(repr(r) for r in target.requirements)}", ""), hanging=2)
    else:
        what = _target_words(target) if target is not None else "this host"
        out.line(*label, (f"{count_words}: {what} can run here", ""), hanging=2)
    if build is not None:
        lead = f"Best fit, PyTorch {build.torch}:" if answer.asked else "Best fit:"
        _build_lines(out, lead, build, answer.newest_that_runs, answer.explained)


def render_check(console: Console, result: CheckResult, answer: Answer, verbosity: int = NORMAL) -> None:
    out = Printer(console)
    render_answer(out, result, answer)
    if verbosity <= QUIET:
        return
    out.blank()
    target, rec = result.target, result.recommendation
    if target is not None and target.origin not in ("--require", "host-only") and (verbosity >= VERBOSE or answer.kind not in (USE, FIX_FIRST)):
        out.line(("Checked: ", "bold"), (_target_words(target), ""), hanging=2)
        out.blank()
    hidden = render_findings(console, result.findings, result.facts.gpus, verbosity, out)
    rejected = rec.rejected if (verbosity >= VERBOSE or not rec.found) else ()
    if rejected:
        out.line((_others_heading(rec, other=False) + ("" if rec.found else " (none fits)"), "bold"))
        for rejection in rejected:
            out.line((f"{rejection.variant}: {rejection.reason}", "dim"), indent=2, hanging=4)
        out.blank()
    # What the recommendation rests on that is less than a read binary: by default only what may
    # change the answer; -v lists every note. A release's notes matter when its variants were judged.
    for note in rec.notes if verbosity >= VERBOSE or (not rec.found and rec.rejected) else rec.caveats:
        out.line((f"note: {note}", "yellow"), hanging=2)
    if hidden:
        out.line((f"{_plural(hidden, 'other check')} passed or noted; -v lists them.", "dim"))
    shown_image = answer.build.image if answer.build is not None else None
    if _is_convention(rec.family, shown_image):
        out.line((convention_note(), "dim"))
