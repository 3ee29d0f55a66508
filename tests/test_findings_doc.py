"""docs/findings.md is the list of finding codes: every code the package can produce is in it,
and every code in it is asserted by some test."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC_ROW = re.compile(r"^\|\s*`([a-z0-9-]+)`\s*\|", re.MULTILINE)
# Finding("code", ...) and Finding(\n "code", ...) literals in the package.
PRODUCED = re.compile(r"Finding\(\s*(?:code=)?\"([a-z0-9-]+)\"")


CHECKS_SECTION = re.compile(r"^### The checks an `internal-error` can name$.*?(?=^## )", re.MULTILINE | re.DOTALL)


def documented() -> set[str]:
    # The table of check names looks like a table of codes; it is not one.
    return set(DOC_ROW.findall(CHECKS_SECTION.sub("", (REPO / "docs" / "findings.md").read_text())))


def produced() -> set[str]:
    codes: set[str] = set()
    for path in (REPO / "cudadoctor").rglob("*.py"):
        codes.update(PRODUCED.findall(path.read_text()))
    return codes


def test_the_scan_sees_the_package():
    assert {"nvml-ok", "driver-uvm-missing", "torch-cpu-build"} <= produced()


def test_every_produced_code_is_documented():
    missing = produced() - documented()
    assert not missing, f"finding codes missing from docs/findings.md: {sorted(missing)}"


def test_every_documented_code_is_asserted_by_a_test():
    tests = "".join(p.read_text() for p in (REPO / "tests").glob("test_*.py") if p.name != Path(__file__).name)
    untested = sorted(code for code in documented() if f'"{code}"' not in tests)
    assert not untested, f"documented finding codes no test asserts: {untested}"
