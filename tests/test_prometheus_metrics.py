"""`fleet --format prometheus` and `probe --prometheus FILE`: the fleet's verdicts as Prometheus
metrics, read back with the official client library's parser; names and labels follow Prometheus'
conventions (a `cudadoctor_` prefix, no host names in labels); the file is written atomically and
an alert on a node that stops running a release can be written against it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from cudadoctor.fleet.prometheus import label_value
from fleet_nodes import gfd_labels, node, node_list
from helpers import HOSTS, invoke, run_cli

ALLOWED_LABELS = {"version", "verdict", "torch", "variant", "cuda", "branch", "code", "severity"}


def families(text: str) -> dict[str, Any]:
    parsed = {f.name: f for f in text_string_to_metric_families(text)}
    assert parsed, "no metric parsed"
    return parsed


def samples(fams: dict[str, Any], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(s.labels.items())): s.value for s in fams[name].samples}


def value(fams: dict[str, Any], name: str, **labels: str) -> float:
    return samples(fams, name)[tuple(sorted(labels.items()))]


def fleet_metrics(*sources: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    run = invoke("fleet", *sources, "--format", "prometheus", *extra)
    assert run.exit_code == 0, run.stderr
    return families(run.stdout)


def test_fleet_metrics_parse_with_the_client_library_and_follow_its_conventions():
    run = invoke("fleet", str(HOSTS), "--format", "prometheus")
    fams = families(run.stdout)
    names = {p.stem for p in HOSTS.glob("*.json")}
    for family in fams.values():
        assert family.name.startswith("cudadoctor_") and family.type == "gauge" and family.documentation
        if family.name.endswith("_info"):
            assert {sample.value for sample in family.samples} <= {1}, family  # the labels are the information
        for sample in family.samples:
            assert set(sample.labels) <= ALLOWED_LABELS, sample
            assert not names & set(sample.labels.values()), sample  # no host name is a label value
    assert sum(samples(fams, "cudadoctor_hosts").values()) == 12
    assert value(fams, "cudadoctor_hosts", verdict="fail") == 3


def test_fleet_metrics_say_what_the_matrix_and_the_fleet_answer_say():
    fams = fleet_metrics(str(HOSTS))
    doc = invoke("fleet", str(HOSTS), "--matrix", "--json").json()
    for row in doc["matrix"]["releases"]:
        assert value(fams, "cudadoctor_release_runs_hosts", torch=row["torch"]) == row["ok"] + row["warn"]
        assert value(fams, "cudadoctor_release_hosts", torch=row["torch"], verdict="fail") == row["fail"]
    answer = doc["fleet_recommendation"]
    build = (("cuda", answer["cuda"]), ("torch", answer["torch"]), ("variant", answer["variant"]))
    assert answer["hosts"] > 1
    assert samples(fams, "cudadoctor_newest_runnable_info") == {build: 1}  # an info metric's value is 1
    assert samples(fams, "cudadoctor_newest_runnable_hosts") == {build: answer["hosts"]}
    assert samples(fams, "cudadoctor_every_host_release_info") == {}  # no release runs on every able host here
    assert value(fams, "cudadoctor_driver_hosts", version="550.54.15", branch="550") == 3
    assert value(fams, "cudadoctor_finding_hosts", code="nvml-driver-mismatch", severity="fail") == 1
    assert value(fams, "cudadoctor_finding_hosts", code="driver-minor-compat", severity="warn") == 8


def test_every_release_has_a_series_even_where_no_host_runs_it(tmp_path: Path):
    fams = fleet_metrics(str(HOSTS / "h100-550.json"))
    assert value(fams, "cudadoctor_release_runs_hosts", torch="1.0") == 0  # no sm_90 code in it
    assert value(fams, "cudadoctor_release_runs_hosts", torch="2.14") == 1
    assert value(fams, "cudadoctor_every_host_release_info", torch="2.14") == 1
    sub = tmp_path / "fleet"
    sub.mkdir()
    for name in ("h100-550.json", "h100-535.json", "a100-525.json"):
        (sub / name).write_text((HOSTS / name).read_text())
    fleet = fleet_metrics(str(sub))
    (every,) = samples(fleet, "cudadoctor_every_host_release_info").items()
    assert every[1] == 1  # an info metric, though three hosts run it


def test_a_hostile_label_value_survives_the_parser():
    for text in ['550"} 1\ncudadoctor_x 2', "a\\b", "line\nbreak", "{}=,"]:
        parsed = families(f'# TYPE cudadoctor_t gauge\ncudadoctor_t{{v="{label_value(text)}"}} 1\n')
        assert [s.labels["v"] for s in parsed["cudadoctor_t"].samples] == [text]


def test_fleet_prometheus_refuses_json_and_a_fixed_build_in_one_line():
    for extra in (("--json",), ("--image", "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime")):
        run = run_cli("fleet", str(HOSTS), "--format", "prometheus", *extra)
        assert run.exit_code == 2 and len(run.stderr.strip().splitlines()) == 1 and "drop --" in run.stderr


def test_probe_writes_this_hosts_metrics_atomically(tmp_path: Path, fake_nvml_env):
    env = fake_nvml_env({"driver": "550.54.15", "cuda": 12040, "count": 1, "gpu0.name": "NVIDIA H100 80GB HBM3", "gpu0.cc": "9.0"})
    (tmp_path / "textfile").mkdir()
    target = tmp_path / "textfile" / "cudadoctor.prom"
    run = run_cli("probe", "--prometheus", str(target), env=env)
    assert run.exit_code == 0, run.stderr
    assert run.stdout == ""  # the metrics go to the file; no snapshot is printed unless --json asks
    fams = families(target.read_text())
    assert value(fams, "cudadoctor_hosts", verdict="fail") == 0
    assert value(fams, "cudadoctor_release_runs_hosts", torch="2.14") == 1
    assert value(fams, "cudadoctor_driver_hosts", version="550.54.15", branch="550") == 1
    assert sorted(os.listdir(target.parent)) == ["cudadoctor.prom"]  # no temporary file left behind
    # A rerun replaces it (its own earlier file), and --json prints the snapshot as well.
    both = run_cli("probe", "--prometheus", str(target), "--json", env=env)
    assert both.exit_code == 0 and json.loads(both.stdout)["kind"] == "cudadoctor-host-snapshot"


def test_probe_metrics_on_a_host_without_a_driver_say_it_runs_nothing(tmp_path: Path, nvml_missing_env):
    target = tmp_path / "cudadoctor.prom"
    assert run_cli("probe", "--prometheus", str(target), env=nvml_missing_env).exit_code == 0
    fams = families(target.read_text())
    assert value(fams, "cudadoctor_hosts", verdict="fail") == 1
    assert value(fams, "cudadoctor_finding_hosts", code="nvml-library-missing", severity="fail") == 1
    assert set(samples(fams, "cudadoctor_release_runs_hosts").values()) == {0}


@pytest.mark.parametrize("content", ["important notes\n", '{"kind": "cudadoctor-host-snapshot"}'])
def test_probe_metrics_refuse_to_replace_a_file_it_did_not_write(tmp_path: Path, content: str):
    target = tmp_path / "notes.prom"
    target.write_text(content)
    run = run_cli("probe", "--prometheus", str(target))
    assert run.exit_code == 2 and "--force" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert target.read_text() == content
    assert run_cli("probe", "--prometheus", str(tmp_path)).exit_code == 2  # a directory


def test_alert_expression_fires_for_the_node_that_stops_running_the_release(tmp_path: Path):
    """The recipe's alert is `cudadoctor_release_runs_hosts{torch="2.14"} < 1` per node: after a
    driver rollback a node's series drops to 0; the rest keep 1."""
    before = node_list([node("gpu-1", gfd_labels("RTX5090", "580.95.05", 1))])
    after = node_list([node("gpu-1", gfd_labels("RTX5090", "560.35.03", 1))])
    values = []
    for name, doc in (("before", before), ("after", after)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        values.append(value(fleet_metrics(str(path)), "cudadoctor_release_runs_hosts", torch="2.14"))
    assert values == [1, 0]


def _probe_that_meanwhile(monkeypatch: pytest.MonkeyPatch, act: Any) -> None:
    """probe_host answers with a shipped snapshot, after ``act()`` changed the target (as another
    program might while NVML is being read)."""
    import importlib

    from cudadoctor.model.snapshot import decode_snapshot

    facts = decode_snapshot((HOSTS / "h100-550.json").read_text())

    def fake_probe(**_: Any) -> Any:
        act()
        return facts

    monkeypatch.setattr(importlib.import_module("cudadoctor.probe.host"), "probe_host", fake_probe)


def test_probe_metrics_refuse_a_file_put_there_while_probing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The target is checked again where it is replaced: a file another program wrote while the
    host was being probed is not clobbered (nor is a symlink followed), unless --force."""
    target = tmp_path / "cudadoctor.prom"
    _probe_that_meanwhile(monkeypatch, lambda: target.write_text("important notes\n"))
    run = invoke("probe", "--prometheus", str(target))
    assert run.exit_code == 2 and "--force" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert target.read_text() == "important notes\n"
    assert sorted(os.listdir(tmp_path)) == ["cudadoctor.prom"]  # no temporary file left behind

    forced = invoke("probe", "--prometheus", str(target), "--force")
    assert forced.exit_code == 0, forced.stderr
    assert target.read_text().startswith("# HELP cudadoctor_")

    other = tmp_path / "other.txt"
    other.write_text("keep me\n")
    linked = tmp_path / "linked.prom"
    _probe_that_meanwhile(monkeypatch, lambda: linked.symlink_to(other))
    run = invoke("probe", "--prometheus", str(linked), "--force")
    assert run.exit_code == 2 and "symlink" in run.stderr
    assert other.read_text() == "keep me\n"


def test_probe_metrics_refuse_a_symlink_before_probing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    other = tmp_path / "empty.txt"
    other.write_text("")
    linked = tmp_path / "linked.prom"
    linked.symlink_to(other)
    _probe_that_meanwhile(monkeypatch, lambda: None)
    run = invoke("probe", "--prometheus", str(linked))
    assert run.exit_code == 2 and "symlink" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert other.read_text() == "" and linked.is_symlink()


@pytest.mark.parametrize("fmt", ["prometheus", "html"])
def test_a_fixed_build_with_an_export_format_is_refused_in_one_grammatical_line(fmt: str):
    run = invoke("fleet", str(HOSTS), "--format", fmt, "--variant", "cu126")
    assert run.exit_code == 2
    assert f"--format {fmt} judges whole releases: drop --image and --variant" in run.stderr
    plan = invoke("fleet", str(HOSTS), "--plan", "--variant", "cu126")
    assert plan.exit_code == 2 and "--matrix and --plan judge whole releases" in plan.stderr
