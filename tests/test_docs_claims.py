"""Claims in the docs that are easy to get wrong, checked against the code."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import REPO_ROOT, invoke

DOCS = REPO_ROOT / "docs"


def test_the_families_example_in_table_md_runs_as_written(tmp_path: Path) -> None:
    text = (DOCS / "table.md").read_text(encoding="utf-8")
    section = text[text.index("## Your own image families") :]
    toml = re.search(r"```toml\n(.*?)```", section, flags=re.S).group(1)
    (tmp_path / "acme.toml").write_text(toml)
    command = re.search(r"Then `(cudadoctor recommend [^`]+)`", section).group(1)
    printed = re.search(r"prints `([^`]+)`", section).group(1)
    args = [str(tmp_path / "acme.toml") if a == "acme.toml" else a for a in command.split()[1:]]
    run = invoke(*args, "--driver", "570.86.10", "--gpu", "A100")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip() == printed


def test_the_table_size_in_performance_md_is_the_shipped_tables() -> None:
    text = (DOCS / "performance.md").read_text(encoding="utf-8")
    claimed = int(re.findall(r"122 GPUs, ~(\d+) KB\)", text)[-1])  # the newest row is the shipped table's
    actual = (REPO_ROOT / "data" / "compat_table.json").stat().st_size / 1000
    assert abs(claimed - actual) / actual < 0.1, (claimed, actual)


def test_image_visible_devices_is_documented_as_reported_with_runc_too() -> None:
    text = (DOCS / "findings.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `image-visible-devices`"))
    assert "only when the default runtime is `nvidia`):" not in row
    assert "runc" in row
