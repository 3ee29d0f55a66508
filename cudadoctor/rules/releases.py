"""Newer releases: when nothing was asked for, the target is the newest release that runs here;
that the newest release itself needs more (a newer driver, other GPUs) is said once, as info, with
what would run it. Pure: it reads the newest release's recommendation the orchestration made."""

from __future__ import annotations

from ..model.findings import INFO, Finding
from .context import CheckContext

CODE = "newer-release-available"
SOURCE = "the compatibility table's PyTorch releases and Table 3 driver minimums (docs/table.md)"


def check_newer_release(ctx: CheckContext) -> list[Finding]:
    newest, target = ctx.newest, ctx.target
    if newest is None or target is None or not target.torch:
        return []
    needs, upgrade = newest.needs()
    runs = f"this host runs up to PyTorch {target.torch}"
    ceiling = ctx.host.driver_ceiling()
    # An upgrade that names no full driver because full support is past the GPUs' last branch says so.
    capped = (f" (it runs there only under minor-version compatibility: {ceiling.words()})" if ceiling is not None else "")
    if upgrade is not None:
        full = f" (>= {upgrade.full_driver} for full CUDA {upgrade.cuda} support)" if upgrade.full_driver and upgrade.full_driver != upgrade.min_driver else ""
        detail = f"PyTorch {newest.torch}: {newest.why}; {runs}."
        if not full and upgrade.support == "minor-compat" and upgrade.full_driver is None:
            full = capped
        hint = f"To run PyTorch {newest.torch} ({upgrade.variant}), upgrade the NVIDIA driver to >= {upgrade.min_driver}{full}."
    else:
        reasons = "; ".join(f"{r.variant}: {r.reason}" for r in newest.rejected) or newest.why
        detail = f"No driver upgrade makes it run here ({runs}): {reasons}."
        hint = f"Stay on PyTorch {target.torch}, or plan for other GPUs with `cudadoctor check --torch {newest.torch} --gpu MODEL`."
        reach = newest.reachable
        if reach is not None:  # a newer release than the one chosen does have a build for these GPUs
            needs += f"; PyTorch {reach.torch} ({reach.variant}) runs them from driver >= {reach.min_driver}"
            more = capped if reach.support == "minor-compat" and reach.full_driver is None else ""
            hint = f"To run PyTorch {reach.torch} ({reach.variant}), upgrade the NVIDIA driver to >= {reach.min_driver}{more}."
            upgrade = reach
    return [Finding(
        code=CODE, severity=INFO, title=f"PyTorch {newest.torch}, the newest release, {needs}", detail=detail, hint=hint,
        source=SOURCE, actions=(upgrade,) if upgrade is not None else (),
    )]
