"""`cudadoctor fleet`: GFD labels and snapshots judged per group, the fleet answer, bad input,
the JSON schema and the nodeAffinity (checked against Kubernetes' own matching rules)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from cudadoctor.fleet.gfd import LabelError, facts_from_labels
from cudadoctor.fleet.judge import judge_fleet
from cudadoctor.fleet.sources import FleetHost, hosts_in
from fleet_nodes import gfd_labels, mixed_cluster, node, node_list
from helpers import HOSTS, core_check, invoke

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "cudadoctor" / "schemas" / "fleet.schema.json").read_text())


def valid(doc: dict[str, Any]) -> dict[str, Any]:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    return doc


def write(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def by_host(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: g for g in doc["groups"] for name in g["hosts"]}


# --- GFD labels -> facts ----------------------------------------------------------------------


def test_labels_become_the_facts_gfd_states():
    facts = facts_from_labels(gfd_labels("H100", "550.127.05", 8), hostname="n1")
    assert facts.driver.driver_version == "550.127.05"
    assert facts.driver.cuda_driver_version == "12.4"
    assert len(facts.gpus) == 8
    assert {g.compute_capability for g in facts.gpus} == {"9.0"}
    assert facts.gpus[0].memory_total_bytes == 81559 * 1024 * 1024
    # Nothing the labels do not carry is invented.
    assert facts.system is None and facts.docker is None and facts.torch is None
    assert facts.gpus[0].uuid is None and facts.gpus[0].retired_pages_pending is None


def test_old_gfd_driver_labels_without_full_version():
    labels = {k: v for k, v in gfd_labels("T4", "535.216.01", 1).items() if "driver-version" not in k and "runtime-version" not in k}
    facts = facts_from_labels(labels)
    assert facts.driver.driver_version == "535.216.01"
    assert facts.driver.cuda_driver_version == "12.2"


def test_mig_single_strategy_labels_count_mig_devices():
    facts = facts_from_labels(gfd_labels("A100-40", "570.133.20", 1, mig_profile="1g.5gb"))
    (gpu,) = facts.gpus
    assert gpu.mig_enabled is True and gpu.name == "NVIDIA-A100-SXM4-40GB"
    assert len(gpu.mig_devices) == 7 and gpu.mig_devices[0].memory_total_bytes == 4864 * 1024 * 1024
    assert "mig-instances" in [f.code for f in core_check(facts).findings]


def test_node_without_gpu_labels_is_unknown_not_failed():
    assert facts_from_labels({"kubernetes.io/os": "linux"}) is None
    doc = valid(invoke_json(node_list([node("cpu-0"), node("gpu-0", gfd_labels("H100", "580.95.05"))])))
    assert doc["summary"]["unknown"] == 1 and doc["summary"]["fail"] == 0
    assert by_host(doc)["cpu-0"]["verdict"] == "unknown"


@pytest.mark.parametrize(
    "key, value",
    [("nvidia.com/gpu.compute.major", "x"), ("nvidia.com/gpu.count", "-1"), ("nvidia.com/cuda.driver-version.full", "abc"),
     ("nvidia.com/gpu.memory", "lots")],
)
def test_impossible_label_values_are_label_errors(key, value):
    labels = {**gfd_labels("H100", "550.127.05"), key: value}
    with pytest.raises(LabelError) as err:
        facts_from_labels(labels)
    assert value in str(err.value)


# --- grouping and the fleet answer -----------------------------------------------------------


def _hosts(doc: Any) -> list[FleetHost]:
    return [h for h in hosts_in(doc, "cluster.json", "cluster") if isinstance(h, FleetHost)]


def test_each_group_is_checked_once_and_matches_a_single_host_check():
    from cudadoctor.doctor import resolve_request
    from cudadoctor.app.loader import load_table

    table = load_table()
    request = resolve_request(table)
    hosts = _hosts(mixed_cluster(per_pool=4))
    fleet = judge_fleet(hosts, table, request)
    assert len(fleet.groups) == 12  # 11 pools and the CPU nodes
    assert sum(len(g.hosts) for g in fleet.groups) == len(hosts)
    for group in fleet.groups:
        for host in group.hosts:
            if host.facts is None:
                assert group.verdict == "unknown"
                continue
            alone = core_check(host.facts, table)
            assert alone.verdict == group.verdict, host.name
            assert {f.code for f in alone.findings} == {f.code for f in group.result.findings}


def invoke_json(cluster: Any, *args: str, tmp: Path | None = None) -> dict[str, Any]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d) / "nodes.json", cluster)
        run = invoke("fleet", path, "--json", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.json()


def test_fleet_json_groups_verdicts_fixes_and_answer(tmp_path):
    path = write(tmp_path / "nodes.json", mixed_cluster())
    run = invoke("fleet", path, "--json", "--torch", "2.11")  # the counts below are 2.11's
    assert run.exit_code == 1  # the V100 and K80 pools on 470 fail
    doc = valid(run.json())
    assert doc["kind"] == "fleet" and doc["hosts"] == 35
    assert doc["summary"] == {"ok": 15, "warn": 12, "fail": 6, "unknown": 2}
    groups = by_host(doc)
    v100 = groups["v100-470-0"]
    assert v100["verdict"] == "fail" and "driver-too-old" in v100["findings"]
    assert v100["fix"].startswith("use PyTorch 2.7 cu118")  # the answer's: the release that runs there
    assert v100["answer"]["other_fixes"][0]["text"].startswith("upgrade the NVIDIA driver to >= ")  # or, for 2.11
    assert v100["count"] == 3 and v100["hosts"] == ["v100-470-0", "v100-470-1", "v100-470-2"]
    assert "gpu-health" in v100["missing"]  # label-read hosts say what they do not know
    assert groups["k80-470-0"]["fix"].startswith("use PyTorch ")
    assert groups["h100-580-0"]["recommendation"]["variant"] == "cu130"
    answer = doc["fleet_recommendation"]
    assert answer["hosts"] == 27 and answer["of"] == 33
    assert answer["torch"] == "2.11" and answer["image"] == f"pytorch/pytorch:2.11.0-cuda{answer['cuda']}-cudnn9-runtime"
    left = {name for entry in answer["left_out"] for name in entry["hosts"]}
    assert left == {f"{p}-{i}" for p in ("v100-470", "k80-470") for i in range(3)}
    assert all(entry["fix"] and entry["findings"] for entry in answer["left_out"])  # each with the change that brings it in
    # The answer is the candidate reaching the most hosts.
    assert answer["hosts"] == max(c["hosts"] for c in doc["candidates"])


def test_text_report_names_a_few_hosts_then_counts_the_rest(tmp_path):
    cluster = node_list([node(f"t4-{i}", gfd_labels("T4", "525.147.05", 1)) for i in range(12)])
    run = invoke("fleet", write(tmp_path / "n.json", cluster), "--torch", "2.11")
    assert run.exit_code == 0
    assert "and 7 more" in run.stdout
    assert "t4-11" not in run.stdout


def test_variant_pins_the_target(tmp_path):
    doc = valid(invoke_json(mixed_cluster(), "--torch", "2.14", "--variant", "cu130"))
    assert doc["target"]["variant"] == "cu130"
    assert doc["fleet_recommendation"]["variant"] == "cu130"
    assert by_host(doc)["a100-550-0"]["verdict"] == "fail"
    assert "driver-too-old" in by_host(doc)["a100-550-0"]["findings"]


def test_snapshot_directory_recursive_with_a_bad_file(tmp_path):
    tree = tmp_path / "hosts"
    shutil.copytree(HOSTS, tree / "rack1")
    (tree / "rack2").mkdir()
    (tree / "rack2" / "broken.json").write_text("{not json")
    (tree / "rack2" / "other.json").write_text(json.dumps({"schema": 7, "kind": "cudadoctor-host-snapshot", "host": {}}))
    (tree / "rack2" / "notes.txt").write_text("ignored")
    run = invoke("fleet", str(tree), "--json")
    assert run.exit_code == 1
    doc = valid(run.json())
    assert doc["hosts"] == len(list(HOSTS.glob("*.json")))
    errors = {Path(e["source"]).name: e["error"] for e in doc["errors"]}
    assert set(errors) == {"broken.json", "other.json"}
    assert "not valid JSON" in errors["broken.json"] and "schema 7" in errors["other.json"]
    assert "broken.json" in run.stderr and "Traceback" not in run.stderr


def test_duplicate_host_names_across_sources_are_reported(tmp_path):
    a = write(tmp_path / "a.json", node_list([node("gpu-1", gfd_labels("H100", "580.95.05"))]))
    b = write(tmp_path / "b.json", node("gpu-1", gfd_labels("H100", "535.216.01")))
    run = invoke("fleet", a, b, "--json")
    doc = valid(run.json())
    assert doc["duplicates"] == [{"host": "gpu-1", "sources": [a, b]}]
    assert doc["hosts"] == 2
    text = invoke("fleet", a, b)
    assert "duplicate" in text.stdout and "gpu-1" in text.stdout


def test_stdin_source():
    from click.testing import CliRunner

    from cudadoctor.cli import cli

    result = CliRunner().invoke(cli, ["fleet", "-", "--json", "--torch", "2.14"], input=json.dumps(node("n", gfd_labels("L40S", "570.133.20", 4))))
    assert result.exit_code == 0, result.stderr
    assert valid(json.loads(result.stdout))["summary"]["ok"] == 1


# --- bad input: one line, exit 2 -------------------------------------------------------------


@pytest.mark.parametrize(
    "content, says",
    [
        ("[1, 2", "not valid JSON"),
        (json.dumps({"kind": "Pod", "metadata": {"name": "x"}}), "neither a cudadoctor host snapshot"),
        (json.dumps({"schema": 9, "kind": "cudadoctor-host-snapshot", "host": {}}), "schema 9"),
        (json.dumps({"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n", "labels": {"nvidia.com/gpu.compute.major": "x", "nvidia.com/gpu.compute.minor": "0"}}}]}), "nvidia.com/gpu.compute.major"),
        (json.dumps({"kind": "List", "items": [{"kind": "Node", "metadata": {}}]}), "metadata.name"),
    ],
)
def test_bad_sources_exit_2_with_one_line(tmp_path, content, says):
    path = tmp_path / "bad.json"
    path.write_text(content)
    run = invoke("fleet", str(path))
    assert run.exit_code == 2
    assert says in run.stderr and str(path) in run.stderr
    assert "Traceback" not in run.stderr


def test_bad_node_in_a_list_is_reported_and_the_rest_judged(tmp_path):
    bad = node("bad-0", {**gfd_labels("H100", "580.95.05"), "nvidia.com/gpu.compute.major": "x"})
    path = write(tmp_path / "n.json", node_list([bad, node("good-0", gfd_labels("H100", "580.95.05"))]))
    run = invoke("fleet", path, "--json")
    assert run.exit_code == 0
    doc = valid(run.json())
    assert doc["hosts"] == 1 and "bad-0" in doc["errors"][0]["error"]
    assert "bad-0" in run.stderr


def test_directory_entry_that_cannot_be_read_is_reported(tmp_path):
    # A dangling symlink named *.json cannot be opened, whoever runs the test.
    shutil.copy(HOSTS / "h100-550.json", tmp_path / "ok.json")
    (tmp_path / "gone.json").symlink_to(tmp_path / "nowhere")
    run = invoke("fleet", str(tmp_path), "--json")
    doc = valid(run.json())
    assert doc["hosts"] == 1
    assert any("gone.json" in e["error"] and "no such file" in e["error"] for e in doc["errors"])


def test_nothing_readable_is_exit_2(tmp_path):
    (tmp_path / "x.json").write_text("nope")
    run = invoke("fleet", str(tmp_path))
    assert run.exit_code == 2
    assert "no host could be read" in run.stderr


def test_missing_file_and_no_source(tmp_path):
    run = invoke("fleet", str(tmp_path / "absent.json"))
    assert run.exit_code == 2 and "no such file" in run.stderr
    assert invoke("fleet").exit_code == 2


# --- nodeAffinity ------------------------------------------------------------------------------


def k8s_matches(labels: dict[str, str], affinity: dict[str, Any]) -> bool:
    """Kubernetes' NodeSelector semantics: terms ORed, expressions ANDed; Gt/Lt parse the label as
    an integer (no label or not an integer: no match)."""

    def requirement(expr: dict[str, Any]) -> bool:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In":
            return key in labels and labels[key] in values
        if op == "NotIn":
            return key not in labels or labels[key] not in values
        if op == "Exists":
            return key in labels
        if op == "DoesNotExist":
            return key not in labels
        if op in ("Gt", "Lt"):
            try:
                have, want = int(labels[key]), int(values[0])
            except (KeyError, ValueError):
                return False
            return have > want if op == "Gt" else have < want
        raise AssertionError(op)

    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return any(all(requirement(e) for e in t["matchExpressions"]) for t in terms)


@pytest.mark.parametrize("args", [(), ("--torch", "2.14", "--variant", "cu126"), ("--torch", "2.7")])
def test_node_affinity_selects_exactly_the_nodes_that_can_run(tmp_path, args):
    cluster = mixed_cluster()
    path = write(tmp_path / "nodes.json", cluster)
    report = invoke("fleet", path, "--json", *args).json()
    judged = {n for g in report["groups"] if g["verdict"] != "unknown" for n in g["hosts"]}
    left_out = {n for entry in report["fleet_recommendation"]["left_out"] for n in entry["hosts"]}
    runs = judged - left_out  # the nodes the fleet's answer runs on
    assert runs
    run = invoke("fleet", path, "--format", "node-affinity", "--json", *args)
    assert run.exit_code == 0, run.stderr
    affinity = run.json()
    selected = {n["metadata"]["name"] for n in cluster["items"] if k8s_matches(n["metadata"]["labels"], affinity)}
    assert selected == runs
    # The YAML form is the same object, and the kubernetes client's models accept it.
    text = invoke("fleet", path, "--format", "node-affinity", *args).stdout
    parsed = yaml.safe_load(text)["affinity"]
    assert parsed == affinity
    from kubernetes.client import ApiClient

    model = ApiClient()._ApiClient__deserialize(parsed, "V1Affinity")
    assert model.node_affinity.required_during_scheduling_ignored_during_execution.node_selector_terms


def test_node_affinity_driver_floor_on_new_nodes():
    """A node the fleet has never seen is placed by its labels: one revision under the floor is out."""
    from cudadoctor.doctor import resolve_request
    from cudadoctor.fleet.affinity import node_affinity
    from cudadoctor.app.loader import load_table

    table = load_table()
    request = resolve_request(table, torch="2.11", variant="cu128")
    fleet = judge_fleet(_hosts(mixed_cluster(per_pool=1)), table, request)
    affinity = node_affinity(fleet, table)
    floor = table.minor_compat_floor(12).min_driver_linux  # cu128 on a sass GPU: minor-version compat
    major, minor, rev = (floor.raw.split(".") + ["0"])[:3]
    def labels(driver: str) -> dict[str, str]:
        # The kubelet labels every node with its architecture; GFD's labels come on top.
        return node("new", gfd_labels("L40S", "570.133.20"))["metadata"]["labels"] | {"nvidia.com/cuda.driver.major": driver.split(".")[0],
                                                     "nvidia.com/cuda.driver.minor": driver.split(".")[1],
                                                     "nvidia.com/cuda.driver.rev": driver.split(".")[2]}
    assert k8s_matches(labels(floor.raw), affinity)
    assert not k8s_matches(labels(f"{major}.{minor}.{int(rev) - 1:02d}"), affinity)
    assert k8s_matches(labels(f"{major}.{int(minor) + 1}.00"), affinity)


# --- snapshots decoded once per kind ---------------------------------------------------------


def test_snapshot_cache_gives_exactly_the_codecs_facts():
    from cudadoctor.fleet.sources import SnapshotCache, identity_free
    from cudadoctor.model.snapshot import SnapshotError, snapshot_from_dict

    cache = SnapshotCache()
    base = json.loads((HOSTS / "v100-h100-550.json").read_text())
    kinds = set()
    for i in range(5):
        data = json.loads(json.dumps(base))
        data["host"]["hostname"] = f"node-{i}"
        data["host"]["probed_at"] = f"2026-12-01T10:00:0{i}Z"
        for gpu in data["host"]["gpus"]:
            gpu["uuid"] = f"GPU-{i}-{gpu['index']}"
        facts, kind = cache.decode(data)
        assert facts == snapshot_from_dict(data)  # names and GPU identities are this host's own
        assert kind == identity_free(facts)
        kinds.add(id(kind))
    assert len(kinds) == 1  # one kind, shared
    # A cached kind still checks the fields it fills in, as the codec would.
    bad = json.loads(json.dumps(base))
    bad["host"]["gpus"][0]["uuid"] = 5
    with pytest.raises(SnapshotError, match=r"gpus\[0\]\.uuid"):
        cache.decode(bad)
    with pytest.raises(SnapshotError):
        snapshot_from_dict(bad)


def _named(base: dict[str, Any], **host: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(base))
    data["host"].update(host)
    return data


def _bad_lone_surrogate(data: dict[str, Any]) -> None:
    data["host"]["hostname"] = "\ud800x"


def _bad_name_and_gpu(data: dict[str, Any]) -> None:  # the codec reads the GPUs before the names
    data["host"]["hostname"] = 7
    data["host"]["gpus"][1]["uuid"] = 5


def _bad_long_name(data: dict[str, Any]) -> None:  # the codec shortens what it quotes
    data["host"]["hostname"] = list(range(100))


def _bad_pci_bus_id(data: dict[str, Any]) -> None:
    data["host"]["gpus"][0]["pci_bus_id"] = True


@pytest.mark.parametrize("spoil", [_bad_lone_surrogate, _bad_name_and_gpu, _bad_long_name, _bad_pci_bus_id])
@pytest.mark.parametrize("read", ["parsed", "bytes"])
def test_a_cached_kind_refuses_a_bad_name_or_identity_in_the_codecs_words(spoil, read):
    from cudadoctor.fleet.sources import SnapshotCache, SourceError, decode_hosts
    from cudadoctor.model.snapshot import SnapshotError, snapshot_from_dict

    base = json.loads((HOSTS / "v100-h100-550.json").read_text())
    bad = _named(base, hostname="other")
    spoil(bad)
    with pytest.raises(SnapshotError) as codec:
        snapshot_from_dict(bad)
    cache = SnapshotCache()
    if read == "parsed":
        cache.decode(base)
        with pytest.raises(SnapshotError) as cached:
            cache.decode(bad)
        assert str(cached.value) == str(codec.value)
    else:  # read as the CLI reads a file: by msgspec where it can (not a lone surrogate)
        list(decode_hosts(json.dumps(base).encode(), "a.json", "a", cache))
        with pytest.raises(SourceError) as read_error:
            list(decode_hosts(json.dumps(bad).encode(), "b.json", "b", cache))
        assert str(read_error.value) == f"b.json: {codec.value}"


@pytest.mark.parametrize("strict", [False, True])
def test_snapshots_without_a_gpus_key_share_a_kind_with_the_codecs_facts(strict):
    from cudadoctor.fleet.sources import SnapshotCache
    from cudadoctor.model.snapshot import snapshot_from_dict

    base = json.loads((HOSTS / "no-gpu-550.json").read_text())
    del base["host"]["gpus"]  # the field's default: no GPU
    cache = SnapshotCache()
    kinds = set()
    for name in ("a", "b"):
        data = _named(base, hostname=name)
        facts, kind = cache.decode(data, _decoded_by_msgspec=strict)
        assert facts == snapshot_from_dict(data)
        kinds.add(id(kind))
    assert len(kinds) == 1


def test_cuda_visible_devices_keeps_gpu_identities_in_the_group_key(tmp_path):
    base = json.loads((HOSTS / "v100-h100-550.json").read_text())
    for i, visible in enumerate(("GPU-a", "GPU-a", "GPU-b")):
        data = json.loads(json.dumps(base))
        data["host"]["hostname"] = f"n{i}"
        data["host"]["system"] = {"environment": [["CUDA_VISIBLE_DEVICES", "GPU-a"]]}
        data["host"]["gpus"][0]["uuid"] = visible  # n0, n1: GPU 0 is the visible one; n2: none is
        (tmp_path / f"n{i}.json").write_text(json.dumps(data))
    doc = valid(invoke("fleet", str(tmp_path), "--json").json())
    groups = sorted(sorted(g["hosts"]) for g in doc["groups"])
    assert groups == [["n0", "n1"], ["n2"]]


def test_a_judged_group_keeps_every_findings_code_and_severity_and_the_words_of_those_that_warn_or_fail():
    from cudadoctor.doctor import resolve_request
    from cudadoctor.app.loader import load_table

    table = load_table()
    request = resolve_request(table)
    snapshots = [hosts_in(json.loads(p.read_text()), str(p), p.stem) for p in sorted(HOSTS.glob("*.json"))]
    hosts = [h for found in snapshots for h in found if isinstance(h, FleetHost)] + _hosts(mixed_cluster(per_pool=1))
    fleet = judge_fleet(hosts, table, request)
    worded = 0
    for group in fleet.groups:
        if group.result is None:
            continue
        alone = core_check(group.hosts[0].facts, table)
        assert [(f.code, f.severity) for f in group.result.findings] == [(f.code, f.severity) for f in alone.findings]
        assert [f for f in group.result.findings if f.severity in ("warn", "fail")] == [
            f for f in alone.findings if f.severity in ("warn", "fail")]
        worded += sum(1 for f in group.result.findings if f.severity in ("warn", "fail"))
        kept, whole = group.result.recommendation, alone.recommendation
        assert (kept.torch, kept.variant, kept.cuda, kept.image, kept.support) == (
            whole.torch, whole.variant, whole.cuda, whole.image, whole.support)
        assert group.result.target == alone.target
    assert worded  # the hosts include some that warn or fail


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_non_finite_number_never_shares_the_facts_of_a_snapshot_with_null_there(number):
    # msgspec writes NaN and infinities as null: a key it encodes is only for a document it read,
    # and it reads none of these (json does, for the codec to refuse)
    from cudadoctor.fleet.sources import SnapshotCache, SourceError, decode_hosts
    from cudadoctor.model.facts import DockerFacts
    from cudadoctor.model.snapshot import SnapshotError, snapshot_from_dict, to_jsonable

    base = json.loads((HOSTS / "h100-550.json").read_text())
    base["host"]["docker"] = to_jsonable(DockerFacts())  # timeout_s: null
    text = json.dumps(base)
    assert '"timeout_s": null' in text
    odd = text.replace('"timeout_s": null', f'"timeout_s": {number}')
    with pytest.raises(SnapshotError) as codec:
        snapshot_from_dict(json.loads(odd))
    cache = SnapshotCache()
    list(decode_hosts(text.encode(), "a.json", "a", cache))
    with pytest.raises(SourceError) as read_error:
        list(decode_hosts(odd.encode(), "b.json", "b", cache))
    assert str(read_error.value) == f"b.json: {codec.value}"
