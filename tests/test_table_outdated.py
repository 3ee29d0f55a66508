"""`table-outdated`: a release newer than the table knows, or a table older than 120 days. The clock is
an input (the request's date, else the facts' probe time), so these tests pin it."""

from __future__ import annotations

from cudadoctor.app.loader import load_table
from cudadoctor.model.facts import HostFacts, TorchFacts
from helpers import core_check, host, invoke

TABLE = load_table()


def outdated(result):
    return [f for f in result.findings if f.code == "table-outdated"]


def test_age_is_judged_at_the_requested_date():
    facts = HostFacts()
    assert outdated(core_check(facts, only=["table-current"], today="2027-03-30")) == []  # 119 days
    found = outdated(core_check(facts, only=["table-current"], today="2027-04-01"))  # 121 days
    assert len(found) == 1 and found[0].severity == "info" and "121 days old" in found[0].title
    assert "cudadoctor table update" in found[0].hint
    assert outdated(core_check(facts, only=["table-current"])) == []  # no clock given, none probed: not judged


def test_age_falls_back_to_the_probe_time():
    facts = HostFacts(probed_at="2028-01-01T00:00:00+00:00")
    assert len(outdated(core_check(facts, only=["table-current"]))) == 1
    assert outdated(core_check(facts, only=["table-current"], today="2026-12-02")) == []  # the request's date wins


def test_installed_torch_newer_than_the_table():
    facts = HostFacts(torch=TorchFacts(installed=True, version="2.16.0+cu130"))
    found = outdated(core_check(facts, only=["table-current"], today="2026-12-01"))
    assert len(found) == 1 and "PyTorch 2.16.0+cu130" in found[0].title and "newest: 2.15" in found[0].title
    known = HostFacts(torch=TorchFacts(installed=True, version="2.15.0"))
    assert outdated(core_check(known, only=["table-current"], today="2026-12-01")) == []


def test_check_torch_newer_than_the_table_is_judged_as_the_newest_and_said():
    run = invoke("check", "--json", "--snapshot", host("h100-550"), "--torch", "2.16")
    data = run.json()
    assert data["target"]["torch"] == "2.15"
    found = [f for f in data["findings"] if f["code"] == "table-outdated"]
    assert len(found) == 1 and "--torch" in found[0]["title"] and found[0]["severity"] == "info"
    assert run.exit_code in (0, 1)
    # recommend and table refuse it, in one line, with the same cure
    for args in (("recommend", "--torch", "2.16", "--driver", "580.65.06"), ("table", "--torch", "2.16")):
        result = invoke(*args)
        assert result.exit_code == 2 and "cudadoctor table update" in result.stderr, args


def test_cli_clock_and_snapshot_clock(monkeypatch):
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2027-12-01")
    codes = invoke("check", "--json", "--snapshot", host("h100-550")).codes()
    assert "table-outdated" in codes
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2026-12-01")
    assert "table-outdated" not in invoke("check", "--json", "--snapshot", host("h100-550")).codes()
    monkeypatch.setenv("CUDADOCTOR_TODAY", "yesterday")
    bad = invoke("check", "--json", "--snapshot", host("h100-550"))
    assert bad.exit_code == 2 and "YYYY-MM-DD" in bad.stderr


def test_a_release_newer_than_the_table_is_part_of_the_answer_even_quiet():
    """`check --torch 2.99` is judged as the newest release the table knows; the answer (also under
    -q) says so, so a pre-flight never passes for 2.99 without a word."""
    quiet = invoke("check", "-q", "--torch", "2.99", "--driver", "580.65.06", "--gpu", "H100")
    assert quiet.exit_code in (0, 1)
    notes = [line for line in quiet.stdout.splitlines() if line.startswith("Note: ")]
    assert notes and "2.99" in notes[0] and notes[0].endswith("table-outdated")
    plain = invoke("check", "--torch", "2.15", "--driver", "580.65.06", "--gpu", "H100")
    assert "table-outdated" not in plain.stdout
