"""The README's sample report is what a real run prints (piped), with only the wheel index's
address shortened to <PyTorch wheel index> as the README says."""

from __future__ import annotations

from helpers import REPO_ROOT, host, run_cli

PROMPT = "$ cudadoctor check --snapshot tests/hosts/t4-470.json\n"


def test_the_readme_sample_is_a_real_run() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index(PROMPT) + len(PROMPT)
    sample = readme[start : readme.index("```", start)]
    printed = run_cli("check", "--snapshot", host("t4-470")).stdout
    from cudadoctor.app.loader import load_table

    index = load_table().wheel_index_root()  # the table's wheel index, as the run prints it
    assert index in printed
    assert sample == printed.replace(index, "<PyTorch wheel index>")
