"""The fleet by platform and support tier: a node's architecture is one of its facts (arm64 and
amd64 judged apart, node affinity by architecture), full support beats minor-version compatibility
at equal reach, and probe --nfd writes no variant label on a failing host."""

from __future__ import annotations

from pathlib import Path
from typing import Any


from fleet_nodes import gfd_labels, node, node_list
from helpers import core_check, host, invoke
from test_fleet import k8s_matches, valid, write

NS = "cudadoctor.feature.node.kubernetes.io"


def t4_pair(driver: str = "580.95.05") -> dict[str, Any]:
    """One arm64 and one amd64 node, each with a T4 (sm_75) on the same driver."""
    return node_list([node("arm-t4", gfd_labels("T4", driver, 1), arch="arm64"), node("amd-t4", gfd_labels("T4", driver, 1))])


# --- 1. a node's architecture is one of its facts ----------------------------------------------


def test_arm64_and_amd64_nodes_are_judged_apart(tmp_path: Path) -> None:
    # PyTorch 2.14's Linux aarch64 builds carry no sm_75 code; the x86_64 ones do.
    run = invoke("fleet", write(tmp_path / "nodes.json", t4_pair()), "--json", "--torch", "2.14")
    assert run.exit_code == 1, run.stderr
    doc = valid(run.json())
    assert len(doc["groups"]) == 2
    groups = {g["hosts"][0]: g for g in doc["groups"]}
    assert groups["arm-t4"]["os"] == "linux/aarch64" and groups["amd-t4"]["os"] == "linux/x86_64"
    assert groups["arm-t4"]["verdict"] == "fail" and "gpu-arch-not-built" in groups["arm-t4"]["findings"]
    assert groups["arm-t4"]["recommendation"]["variant"] is None
    assert groups["amd-t4"]["verdict"] == "ok" and groups["amd-t4"]["recommendation"]["variant"] == "cu130"
    answer = doc["fleet_recommendation"]
    assert answer["hosts"] == 1 and [e["hosts"] for e in answer["left_out"]] == [["arm-t4"]]


def test_the_group_verdict_is_the_single_host_verdict_on_that_platform() -> None:
    from cudadoctor.doctor import resolve_request
    from cudadoctor.fleet.judge import judge_fleet
    from cudadoctor.fleet.sources import FleetHost, hosts_in
    from cudadoctor.app.loader import load_table

    table = load_table()
    hosts = [h for h in hosts_in(t4_pair(), "n.json", "n") if isinstance(h, FleetHost)]
    fleet = judge_fleet(hosts, table, resolve_request(table, torch="2.14"))
    for group in fleet.groups:
        alone = core_check(group.hosts[0].facts, table, torch="2.14")
        assert alone.verdict == group.verdict
        assert {f.code for f in alone.findings} == {f.code for f in group.result.findings}
        assert alone.recommendation.platform == ("linux-aarch64" if group.names == ("arm-t4",) else "linux-x86_64")


def test_node_info_stands_in_for_missing_arch_labels(tmp_path: Path) -> None:
    arm = node("arm-t4", gfd_labels("T4", "580.95.05", 1), arch="arm64")
    for key in ("kubernetes.io/arch", "beta.kubernetes.io/arch", "kubernetes.io/os", "beta.kubernetes.io/os"):
        del arm["metadata"]["labels"][key]
    doc = valid(invoke("fleet", write(tmp_path / "n.json", arm), "--json", "--torch", "2.14").json())
    assert doc["groups"][0]["os"] == "linux/aarch64" and doc["groups"][0]["verdict"] == "fail"


def test_an_impossible_arch_label_is_one_problem_and_the_rest_judged(tmp_path: Path) -> None:
    bad = node("bad", gfd_labels("T4", "580.95.05", 1), arch="arm 64!")
    run = invoke("fleet", write(tmp_path / "n.json", node_list([bad, node("good", gfd_labels("T4", "580.95.05", 1))])), "--json")
    assert run.exit_code == 0, run.stderr
    doc = valid(run.json())
    assert doc["hosts"] == 1 and "kubernetes.io/arch" in doc["errors"][0]["error"]


def test_node_affinity_selects_by_architecture(tmp_path: Path) -> None:
    cluster = t4_pair()
    path = write(tmp_path / "nodes.json", cluster)
    run = invoke("fleet", path, "--format", "node-affinity", "--json", "--torch", "2.14")
    assert run.exit_code == 0, run.stderr
    affinity = run.json()
    selected = {n["metadata"]["name"] for n in cluster["items"] if k8s_matches(n["metadata"]["labels"], affinity)}
    assert selected == {"amd-t4"}
    # New nodes by their labels: an arm64 H100 runs the aarch64 build (sm_90), an arm64 T4 does not.
    arm_h100 = node("new-h100", gfd_labels("H100", "580.95.05"), arch="arm64")["metadata"]["labels"]
    arm_t4 = node("new-t4", gfd_labels("T4", "580.95.05", 1), arch="arm64")["metadata"]["labels"]
    amd_t4 = node("new-amd-t4", gfd_labels("T4", "580.95.05", 1))["metadata"]["labels"]
    assert k8s_matches(arm_h100, affinity) and k8s_matches(amd_t4, affinity)
    assert not k8s_matches(arm_t4, affinity)
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert all(any(e["key"] == "kubernetes.io/arch" for e in t["matchExpressions"]) for t in terms)


# --- 2. full support before minor-version compatibility at equal reach --------------------------


def test_answer_prefers_full_support_over_minor_compat_at_equal_host_count(tmp_path: Path) -> None:
    # Driver 580 (CUDA 13.0): cu132 runs under minor-version compatibility, cu130 with full support.
    cluster = node_list([node(f"t4-{i}", gfd_labels("T4", "580.95.05", 1)) for i in range(2)])
    doc = valid(invoke("fleet", write(tmp_path / "n.json", cluster), "--json", "--torch", "2.14", "--family", "pytorch-cuda").json())
    reach = {c["variant"]: c["hosts"] for c in doc["candidates"]}
    assert reach["cu132"] == reach["cu130"] == 2
    assert doc["fleet_recommendation"]["variant"] == "cu130"
    order = [c["variant"] for c in doc["candidates"]]
    assert order.index("cu130") < order.index("cu132")  # newer CUDA counts only after the support tier


def test_answer_still_takes_the_newest_cuda_among_fully_supported(tmp_path: Path) -> None:
    cluster = node_list([node("t4-0", gfd_labels("T4", "595.45.04", 1))])  # CUDA 13.2: both full
    doc = valid(invoke("fleet", write(tmp_path / "n.json", cluster), "--json", "--torch", "2.14", "--family", "pytorch-cuda").json())
    assert doc["fleet_recommendation"]["variant"] == "cu132"


# --- 3. probe --nfd: no variant label on a failing host ------------------------------------------


def _features(lines: list[str]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in lines if not line.startswith("#"))


def test_nfd_writes_no_variant_where_the_default_target_fails() -> None:
    from cudadoctor.fleet.nfd import nfd_features
    from cudadoctor.app.loader import load_snapshot, load_table

    table = load_table()
    failing = _features(nfd_features(load_snapshot(host("no-gpu-550")), table))  # broken: no release runs
    assert failing[f"{NS}/verdict"] == "fail"
    assert f"{NS}/variant" not in failing
    assert f"{NS}/torch" in failing  # the release the verdict is for is still said
    from cudadoctor.fleet.gfd import facts_from_labels

    passing = _features(nfd_features(facts_from_labels(gfd_labels("H100", "595.45.04")), table))
    assert passing[f"{NS}/verdict"] != "fail"
    assert passing[f"{NS}/variant"].startswith("cu")
