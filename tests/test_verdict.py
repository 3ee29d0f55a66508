"""A report's verdict is its worst finding's severity: fail over warn over everything else."""

from __future__ import annotations

from hypothesis import given, strategies as st

from cudadoctor.model.findings import FAIL, INFO, OK, SEVERITIES, WARN, Finding, exit_status, verdict


def _findings(severities: list[str]) -> list[Finding]:
    return [Finding(code=f"code-{i}", severity=s, title="t") for i, s in enumerate(severities)]


@given(st.lists(st.sampled_from(SEVERITIES), max_size=12))
def test_the_verdict_is_the_worst_severity_info_counting_as_ok(severities: list[str]) -> None:
    rank = {OK: 0, INFO: 0, WARN: 1, FAIL: 2}
    worst = max((rank[s] for s in severities), default=0)
    assert verdict(_findings(severities)) == (OK, WARN, FAIL)[worst]
    assert verdict(iter(_findings(severities))) == (OK, WARN, FAIL)[worst]  # any iterable, read once
    assert exit_status(_findings(severities)) == (1 if worst == 2 else 0)
    assert exit_status(_findings(severities), strict=True) == (1 if worst >= 1 else 0)
