"""`cudadoctor scan` for people: the answer first, then each package and its binaries."""

from __future__ import annotations

from ..binaries.assess import PackageResult, ScanResult
from ..binaries.judge import arch_list
from ..model.findings import FAIL, OK, WARN, Finding

_MARK = {FAIL: "FAIL", WARN: "WARN", OK: "ok", "info": "info"}
_ORDER = {FAIL: 0, WARN: 1, "info": 2, OK: 3}


def scan_lines(result: ScanResult, verbose: bool = False) -> list[str]:
    lines = [_answer(result)]
    against = ", ".join(f"{g.name} ({g.sm})" for g in result.gpus) or "no GPU"
    if result.driver is not None and result.driver.version:
        against += f", driver {result.driver.version}" + (f" (CUDA {result.driver.cuda})" if result.driver.cuda else "")
    where = "; ".join(f"{s.kind} {s.location}" + (f" ({s.python})" if s.python else "") for s in result.sources)
    lines.append(f"  {result.files_read} shared object(s) read in {where}")
    lines.append(f"  {len(result.packages)} with GPU code, judged against {against}")
    own = {id(f) for p in result.packages for f in p.findings}
    general = [f for f in result.findings if id(f) not in own]
    for finding in general:
        lines.extend(_finding_lines(finding))
    for package in result.packages:
        lines.append("")
        lines.extend(_package_lines(package, verbose))
    return lines


def _answer(result: ScanResult) -> str:
    failing = [f for f in result.findings if f.severity == FAIL]
    if failing:
        first = failing[0].title
        more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
        return f"FAIL: {first}{more}"
    warnings = [f for f in result.findings if f.severity == WARN]
    if warnings:
        return f"WARN: {warnings[0].title}" + (f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else "")
    if not result.gpus:
        return "Listed the GPU code found; no GPU to judge it against"
    if not result.packages:
        return "OK: no CUDA GPU code here, so nothing can fail for want of a kernel image"
    return f"OK: every binary with GPU code runs natively here ({len(result.packages)} package(s))"


def _package_lines(package: PackageResult, verbose: bool) -> list[str]:
    mine = sorted(package.findings, key=lambda f: _ORDER.get(f.severity, 9))
    lines = [package.label if package.owned else f"{package.name} (no package owns it)"]
    for finding in mine:
        if finding.severity == OK and not verbose and len(mine) > 1:
            continue
        lines.extend(_finding_lines(finding, detail=False))
    for binary in package.binaries:
        code = binary.file.code
        if code is None:
            lines.append(f"    {binary.file.path}: unreadable: {binary.file.error}")
            continue
        runtime = f", links CUDA runtime {code.cuda_runtime}" if code.cuda_runtime else ""
        compressed = ", compressed" if any(e.compressed for e in code.entries) else ""
        lines.append(f"    {binary.file.path}: {arch_list(code.entries)}{compressed}{runtime}")
    return lines


def _finding_lines(finding: Finding, detail: bool = True) -> list[str]:
    lines = [f"  {_MARK.get(finding.severity, finding.severity)}  {finding.title}"]
    if detail and finding.detail:
        lines.append(f"        {finding.detail}")
    if finding.hint and finding.severity != OK:
        lines.append(f"        fix: {finding.hint}")
    return lines
