"""`cudadoctor check` on every shipped snapshot, rendered at 80 columns on a real pseudo-terminal,
against renders kept in tests/golden/ (each read once for sense when it was written; the wheel
index's address shortened to <PyTorch wheel index>). A change to
the report shows up here as a diff to read; regenerate on purpose with
CUDADOCTOR_TEST_UPDATE_GOLDEN=1 and read the diff before committing it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from helpers import HOSTS, host
from terminal import run_on_terminal

GOLDEN = Path(__file__).resolve().parent / "golden"
SNAPSHOTS = sorted(p.stem for p in HOSTS.glob("*.json"))
WHOLE_SPAN = re.compile(r"\(?`[^`]+`\)?[.,;:]?")
UPDATE = os.environ.get("CUDADOCTOR_TEST_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_check_renders_as_kept_at_80_columns(name: str) -> None:
    status, text = run_on_terminal(["check", "--snapshot", host(name)], 80, env={"NO_COLOR": "1"})
    assert status in (0, 1), text
    # The kept files name no package index's host: its address is shortened, as in the README.
    from cudadoctor.app.loader import load_table

    text = text.replace(load_table().wheel_index_root(), "<PyTorch wheel index>")
    for line in text.splitlines():
        # Only a command wider than the terminal may be: whole, and alone at column 0 (or a pip line).
        alone = not line.startswith(" ") and WHOLE_SPAN.fullmatch(line) is not None
        assert len(line) <= 80 or alone or line.lstrip().startswith("pip install"), f"{len(line)} columns: {line!r}"
    kept = GOLDEN / f"check-{name}.txt"
    if UPDATE or not kept.exists():
        kept.write_text(text, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"wrote {kept.name}: read it, then commit it")
    assert text == kept.read_text(encoding="utf-8")


def test_every_kept_render_has_its_snapshot() -> None:
    assert sorted(p.name for p in GOLDEN.glob("check-*.txt")) == sorted(f"check-{n}.txt" for n in SNAPSHOTS)
