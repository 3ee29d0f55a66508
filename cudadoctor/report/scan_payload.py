"""`cudadoctor scan --json`: the scan's result as one JSON object (schemas/scan.schema.json)."""

from __future__ import annotations

from typing import Any

from ..binaries.assess import BinaryResult, PackageResult, ScanResult
from ..binaries.code import PTX, SASS
from .payload import finding_payload

SCAN_SCHEMA = 1


def scan_payload(result: ScanResult) -> dict[str, Any]:
    return {
        "schema": SCAN_SCHEMA,
        "verdict": result.verdict,
        "gpus": [{"index": g.index, "name": g.name, "compute_capability": g.compute_capability} for g in result.gpus],
        "driver": None if result.driver is None else {"version": result.driver.version, "cuda": result.driver.cuda},
        "sources": [{"kind": s.kind, "location": s.location, "python": s.python} for s in result.sources],
        "files_read": result.files_read,
        "packages": [_package(p) for p in result.packages],
        "findings": [finding_payload(f) for f in result.findings],
    }


def _package(package: PackageResult) -> dict[str, Any]:
    return {
        "name": package.name if package.owned else None,
        "version": package.version,
        "binaries": [_binary(b) for b in package.binaries],
    }


def _binary(result: BinaryResult) -> dict[str, Any]:
    code = result.file.code
    return {
        "path": result.file.path,
        "error": result.file.error,
        "sass": [] if code is None else [e.sm for e in code.entries if e.kind == SASS],
        "ptx": [] if code is None else [{"arch": e.compute, "ptx_isa": e.ptx_isa} for e in code.entries if e.kind == PTX],
        "compressed": None if code is None else any(e.compressed for e in code.entries),
        "needed": [] if code is None else list(code.needed),
        "cuda_runtime": None if code is None else code.cuda_runtime,
        "verdicts": [
            {
                "gpu_index": index,
                "status": v.status,
                "uses": None if v.used is None else (v.used.sm if v.used.kind == SASS else v.used.compute),
                "needs_cuda": v.needs_cuda,
            }
            for index, v in result.verdicts
        ],
    }

