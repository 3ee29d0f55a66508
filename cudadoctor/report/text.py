"""Text for people, the answer first: the verdict and the one thing to do, then the details (the
failing and warning findings, grouped as the checks declare, each with its detail and hint), each
fact once. Quiet prints the answer only; verbose adds the ok and info findings and every variant.

Lines are wrapped here (report/layout.py), commands are printed whole on lines of their own, and
everything is printed as text, never as markup (see report/console.py)."""

from __future__ import annotations

from typing import Iterable, Optional, Sequence, Union

from rich.console import Console

from ..doctor.check import CheckResult
from ..host.view import gpu_label
from ..model.facts import GpuFacts
from ..model.findings import FAIL, INFO, OK, WARN, Finding, pointed_code
from ..model.record import replace
from ..model.target import Target
from ..recommend import Recommendation
from ..rules import GROUPS
from .console import make_console, symbols
from .layout import Printer
from .payload import pip_command

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
# Failures that another build (variant, release or image) avoids: the answer then leads with the
# build that fits. Any other failure (no driver, no GPU, Docker, a lost GPU) is the thing to fix first.
BUILD_FAILURES = frozenset({"driver-too-old", "gpu-arch-not-built", "gpu-arch-ptx-only", "image-requirement-unsatisfied"})
_VERDICT_STYLE = {OK: "bold green", WARN: "bold yellow", FAIL: "bold red"}
# The family whose tags are a naming convention (cudadoctor's design), not images anyone publishes.
CONVENTION_FAMILY = "pytorch-cuda"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _support_words(support: Optional[str]) -> str:
    if support == "minor-compat":
        return ", under CUDA minor-version compatibility"
    if support == "unknown":
        return ", if the driver is new enough"
    return ""


def _release_line(out: Printer, lead: str, rec: Recommendation, style: str = "bold green") -> None:
    """"<lead> <image> (PyTorch X, CUDA Y[, support])" and the wheel's pip command under it."""
    what = rec.image or f"PyTorch {rec.torch} {rec.variant}"
    out.line((lead, "bold"), (" ", ""), (what, style), (f" (PyTorch {rec.torch} {rec.variant}, CUDA {rec.cuda}{_support_words(rec.support)})", ""))
    command = pip_command(rec)
    if command:
        out.command(command)


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


def render_recommendation(console: Console, rec: Recommendation, show_rejected: bool = True, wheel: bool = False) -> None:
    """`recommend`'s text: the image (or, for --wheel, the pip command and index URL) first."""
    out = Printer(console)
    arrow = symbols(console)["arrow"]
    if rec.found:
        if wheel:
            command = pip_command(rec)
            if command:
                out.command(command, indent=0, style="bold green")
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
    if show_rejected and rec.rejected:
        out.line((f"Other variants of PyTorch {rec.torch}:", "dim"))
        for rejection in rec.rejected:
            out.line((f"{rejection.variant}: {rejection.reason}", "dim"), indent=2, hanging=4)
    for note in rec.notes:  # what the verdict rests on that is less than a read binary
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
    return (
        "note: pytorch-cuda tags are a naming convention, not published images: build or mirror them and set "
        "`repository = \"registry.example.com/ml/pytorch-cuda\"` in ~/.config/cudadoctor/config.toml, or use "
        "PyTorch's own images: --family pytorch/pytorch (or `family = \"pytorch/pytorch\"` there)."
    )


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


def _same_build(target: Optional[Target], rec: Recommendation) -> bool:
    return target is not None and rec.found and target.torch == rec.torch and target.variant == rec.variant and (
        target.image is None or target.image == rec.image
    )


def render_answer(out: Printer, result: CheckResult) -> None:
    """The verdict and the one thing to do, then what the answer rests on that the table does not
    know (a --torch, installed torch or image release newer than it): part of the answer, so
    `-q` shows it too."""
    _render_verdict(out, result)
    for f in result.findings:
        if f.code == "table-outdated":
            out.line(("Note: ", "bold"), (f"{f.title}; {f.hint[:1].lower()}{f.hint[1:]}", ""), hanging=6, tail=[(f.code, "dim")])


def _fix_of(first: Finding, fails: Sequence[Finding]) -> tuple[str, str]:
    """The fix to print for the blocking failure, and the code it comes from: when its hint only
    points at the finding that diagnosed the cause (model.findings.see_hint), that
    finding's own hint, so the answer carries the fix itself."""
    pointed = pointed_code(first.hint)
    for other in fails:
        if other.code == pointed and other.hint:
            return other.hint, other.code
    return first.hint, first.code


def _render_verdict(out: Printer, result: CheckResult) -> None:
    """The verdict and the one thing to do: the image/wheel to use, or the blocking problem and its fix."""
    findings, rec, target = result.findings, result.recommendation, result.target
    verdict = result.verdict
    fails = [f for f in findings if f.severity == FAIL]
    warns = [f for f in findings if f.severity == WARN]
    label = [(_LABEL[verdict], _VERDICT_STYLE[verdict])]
    counts = []
    if fails:
        counts.append(f"{len(fails)} failing")
    if warns:
        counts.append(_plural(len(warns), "warning"))
    count_words = f" ({', '.join(counts)})" if counts else ""
    if verdict == FAIL:
        blocking = [f for f in fails if f.code not in BUILD_FAILURES]
        first = (blocking or fails)[0]
        out.line(*label, (f"{count_words}: {first.title}", ""), tail=[(first.code, "dim")])
        if blocking:
            hint, code = _fix_of(first, fails)
            if hint:
                out.line(("Fix: ", "bold"), (hint, ""), hanging=5, tail=[(code, "dim")] if code != first.code else [])
            if target is not None and target.origin in ("--image", "--variant") and not _same_build(target, rec):
                return  # the user's own choice of build is not in question: only the fix is
            if rec.found:
                _release_line(out, "Then use:", rec)
            elif rec.alternative is not None:
                _release_line(out, f"Then use PyTorch {rec.alternative.torch}:", rec.alternative)
        elif rec.found and not _same_build(target, rec):
            _release_line(out, "Use instead:", rec)
        elif not rec.found and rec.alternative is not None:
            _release_line(out, f"Use PyTorch {rec.alternative.torch} instead:", rec.alternative)
            for fix, action in zip(rec.fixes, rec.actions):
                if action.action != "use-release":
                    out.line((f"Or, for PyTorch {rec.torch}: {fix}", ""), hanging=2)
        else:
            # No build fits as the host is: each distinct failure is part of the fix (a driver
            # upgrade alone does not help a GPU the builds carry no code for).
            hints: list[tuple[str, str]] = []
            for f in fails:
                if f.hint and f.code not in {code for code, _ in hints}:
                    hints.append((f.code, f.hint))
            if not hints and rec.fixes:
                hints.append(("", rec.fixes[0]))
            for code, hint in hints[:3]:
                out.line(("Fix: ", "bold"), (hint, ""), hanging=5, tail=[(code, "dim")] if code and len(hints) > 1 else [])
            if rec.found:
                _release_line(out, "Then use:", rec)
        return
    if rec.found and (target is None or _same_build(target, rec)):
        out.line(*label, (f"{count_words}: use ", ""), (rec.image or rec.variant or "", "bold green"),
                 (f" (PyTorch {rec.torch} {rec.variant}, CUDA {rec.cuda}{_support_words(rec.support)})", ""))
        command = pip_command(rec)
        if command:
            out.command(command)
        return
    what = _target_words(target) if target is not None else "this host"
    out.line(*label, (f"{count_words}: {what} can run here", ""))
    if rec.found:
        _release_line(out, "Best fit:", rec)
    elif rec.alternative is not None:
        _release_line(out, f"Best fit, PyTorch {rec.alternative.torch}:", rec.alternative)


def render_check(console: Console, result: CheckResult, verbosity: int = NORMAL) -> None:
    out = Printer(console)
    render_answer(out, result)
    if verbosity <= QUIET:
        return
    out.blank()
    target, rec = result.target, result.recommendation
    if target is not None and (verbosity >= VERBOSE or not _same_build(target, rec)):
        out.line(("Checked: ", "bold"), (_target_words(target), ""), hanging=2)
        out.blank()
    hidden = render_findings(console, result.findings, result.facts.gpus, verbosity, out)
    rejected = rec.rejected if (verbosity >= VERBOSE or not rec.found) else ()
    if rejected:
        out.line((f"Variants of PyTorch {rec.torch}" + ("" if rec.found else " (none fits)"), "bold"))
        for rejection in rejected:
            out.line((f"{rejection.variant}: {rejection.reason}", "dim"), indent=2, hanging=4)
        out.blank()
    for note in rec.notes:  # what the recommendation rests on that is less than a read binary (unverified, inferred)
        out.line((f"note: {note}", "yellow"), hanging=2)
    if hidden:
        out.line((f"{_plural(hidden, 'other check')} passed or noted; -v lists them.", "dim"))
    shown_image = rec.image if rec.found else (rec.alternative.image if rec.alternative is not None else None)
    if _is_convention(rec.family, shown_image):
        out.line((convention_note(), "dim"))
