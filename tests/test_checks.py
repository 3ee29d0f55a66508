"""Checks as units: each declares its report group, the runner stamps it on the findings, and a
check that raises becomes one reported ``internal-error`` finding while the others still run."""

from __future__ import annotations

from helpers import core_check, host

from cudadoctor.doctor import check, resolve_request
from cudadoctor.app.loader import load_snapshot, load_table
from cudadoctor.rules import CHECKS, GROUPS
from cudadoctor.rules.context import Check

TABLE = load_table()


def test_every_check_has_a_known_group_and_a_unique_name():
    groups = {key for key, _ in GROUPS}
    assert all(c.group in groups for c in CHECKS)
    assert len({c.name for c in CHECKS}) == len(CHECKS)


def test_findings_carry_the_group_and_subject_of_their_check():
    result = core_check(load_snapshot(host("t4-470")))
    by_name = {c.name: c for c in CHECKS}
    assert result.findings
    for finding in result.findings:
        assert finding.group in {c.group for c in CHECKS}
        assert finding.subject
    gpu_ok = [f for f in result.findings if f.code == "gpu-ok"]
    assert gpu_ok and all(f.group == by_name["gpus-present"].group == "gpu" for f in gpu_ok)


def test_a_check_that_raises_is_reported_and_the_others_still_run():
    def broken(ctx):
        raise ZeroDivisionError("boom")

    checks = (CHECKS[0], Check("exploding", "gpu", "gpu", broken)) + CHECKS[1:]
    facts = load_snapshot(host("h100-550"))
    result = check(facts, TABLE, resolve_request(TABLE), checks=checks)
    [crash] = [f for f in result.findings if f.code == "internal-error"]
    assert crash.severity == "fail" and crash.group == "gpu" and crash.subject == "gpu"
    assert "exploding" in crash.title and "ZeroDivisionError: boom" in crash.title and len(crash.title) < 300
    assert result.exit_status() == 1
    healthy = check(facts, TABLE, resolve_request(TABLE))
    # every finding of the healthy run is still there, in the same order, around the crash
    assert [f for f in result.findings if f.code != "internal-error"] == list(healthy.findings)


def test_the_json_vocabularies_of_subject_and_group_are_documented():
    from helpers import REPO_ROOT

    rows = {line.split("|")[1].strip(): line for line in (REPO_ROOT / "docs" / "findings.md").read_text().splitlines() if line.startswith("| `findings[]")}
    assert all(f"`{key}`" in rows["`findings[].group`"] for key, _ in GROUPS)
    assert all(f"`{c.subject}`" in rows["`findings[].subject`"] for c in CHECKS)


def test_values_a_user_typed_are_reported_before_a_missing_file():
    from helpers import invoke

    cases = [
        (["--image", "BAD REF", "--table", "/nonexistent"], "--image:"),
        (["--min-memory", "lots", "--table", "/nonexistent"], "--min-memory:"),
        (["--require", "cuda>>1", "--table", "/nonexistent"], "--require 'cuda>>1'"),
        (["--require", "", "--families", "/nonexistent.toml"], "--require '': no condition"),
        (["--image", "x:1", "--variant", "cu128", "--table", "/nonexistent"], "give --image or --variant"),
        (["--pull", "--require", "cuda>>1"], "--pull needs --image"),
        (["--smoke", "--min-memory", "lots"], "--smoke needs --image"),
        (["--image", "BAD REF", "--pull"], "--image:"),
    ]
    for args, message in cases:
        run = invoke("check", "--snapshot", host("h100-550"), *args)
        assert run.exit_code == 2 and message in run.stderr, (args, run.stderr)


def test_every_check_is_listed_in_findings_md_with_its_group():
    from helpers import REPO_ROOT

    text = (REPO_ROOT / "docs" / "findings.md").read_text()
    section = text.split("### The checks an `internal-error` can name", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in section.splitlines() if line.startswith("| `")}
    assert rows == {f"`{c.name}`": c.group for c in CHECKS}
