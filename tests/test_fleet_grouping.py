"""The fleet judges each kind of host once: hosts are grouped by the facts that decide a verdict
(fleet.judge.verdict_key). Judging every host on its own gives each the verdict, the blocking
codes and the answer of the group it was put in, whatever the hosts' names, GPU identities and
memory sizes; where --min-memory asks about memory, sizes keep hosts apart."""

from __future__ import annotations

import json
from typing import Any, Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudadoctor.app.loader import load_table
from cudadoctor.doctor import check, resolve_request
from cudadoctor.doctor.answer import decide
from cudadoctor.doctor.answer_json import answer_payload
from cudadoctor.fleet.gfd import facts_from_labels
from cudadoctor.fleet.judge import HostGroup, judge_fleet
from cudadoctor.fleet.sources import NODE_LABELS, SNAPSHOT, FleetHost, snapshot_host
from cudadoctor.model.findings import FAIL, WARN
from fleet_nodes import GPUS, gfd_labels
from helpers import HOSTS

TABLE = load_table()
SNAPSHOTS = {p.stem: json.loads(p.read_text()) for p in sorted(HOSTS.glob("*.json"))}
DRIVERS = ["470.256.02", "525.147.05", "535.216.01", "550.127.05", "550.54.15", "570.133.20", "580.95.05", "595.45.04"]


def _blocking(result: Any) -> tuple[str, ...]:
    for severity in (FAIL, WARN):
        codes = tuple(dict.fromkeys(f.code for f in result.findings if f.severity == severity))
        if codes:
            return codes
    return ()


def _alone(host: FleetHost, request: Any) -> tuple[str, tuple[str, ...], Any]:
    assert host.facts is not None
    result = check(host.facts, TABLE, request)
    return result.verdict, _blocking(result), answer_payload(decide(result, TABLE))


def _grouped(group: HostGroup) -> tuple[str, tuple[str, ...], Any]:
    assert group.answer is not None
    return group.verdict, group.blocking, answer_payload(group.answer)


@st.composite
def gfd_host(draw: Any, index: int) -> FleetHost:
    gpu = draw(st.sampled_from(sorted(GPUS)))
    driver = draw(st.sampled_from(["470.256.02"] if gpu == "K80" else DRIVERS))
    labels = gfd_labels(gpu, driver, draw(st.integers(1, 8)))
    labels["nvidia.com/gpu.memory"] = str(draw(st.integers(1024, 200_000)))
    labels["nvidia.com/gpu.machine"] = draw(st.sampled_from(["PowerEdge-XE9680", "DGX-H100", "g5.xlarge"]))
    facts = facts_from_labels(labels, node_os="linux", node_arch="amd64")
    return FleetHost(name=f"node-{index}", source="nodes.json", origin=NODE_LABELS, facts=facts, kind=facts)


@st.composite
def snapshot_of_a_host(draw: Any, index: int) -> FleetHost:
    data = json.loads(json.dumps(SNAPSHOTS[draw(st.sampled_from(sorted(SNAPSHOTS)))]))
    host = data["host"]
    host["hostname"] = f"host-{index}"
    for gpu in host.get("gpus", []):
        gpu["uuid"] = f"GPU-{draw(st.integers(0, 2**32)):08x}-0000-0000-0000-000000000000"
        if gpu.get("memory_total_bytes"):
            gpu["memory_total_bytes"] = draw(st.sampled_from([16, 24, 40, 80, 96])) * 2**30
    return snapshot_host(data, f"h{index}.json", f"h{index}")


@st.composite
def fleets(draw: Any) -> list[FleetHost]:
    count = draw(st.integers(2, 14))
    return [draw(st.one_of(gfd_host(i), snapshot_of_a_host(i))) for i in range(count)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hosts=fleets(), min_memory=st.sampled_from([None, "20GiB", "48GiB"]))
def test_each_host_judged_alone_gets_its_groups_verdict_codes_and_answer(hosts: list[FleetHost], min_memory: Any) -> None:
    request = resolve_request(TABLE, min_memory=min_memory) if min_memory else resolve_request(TABLE)
    fleet = judge_fleet(hosts, TABLE, request)
    assert sum(len(g.hosts) for g in fleet.groups) == len(hosts)
    for group in fleet.groups:
        for host in group.hosts:
            assert _alone(host, request) == _grouped(group), host.name


def test_hosts_that_differ_only_in_memory_size_are_one_group_unless_memory_is_asked_about() -> None:
    def host(name: str, mib: int) -> FleetHost:
        labels = gfd_labels("A100", "550.127.05", 8)
        labels["nvidia.com/gpu.memory"] = str(mib)
        facts = facts_from_labels(labels)
        return FleetHost(name=name, source="n.json", origin=NODE_LABELS, facts=facts, kind=facts)

    hosts = [host("a", 40960), host("b", 81920), host("c", 40960)]
    assert len(judge_fleet(hosts, TABLE, resolve_request(TABLE)).groups) == 1
    asked = judge_fleet(hosts, TABLE, resolve_request(TABLE, min_memory="60GiB"))
    assert sorted(sorted(g.names) for g in asked.groups) == [["a", "c"], ["b"]]
    codes = {g.names: g.blocking for g in asked.groups}
    assert "gpu-memory-low" in codes[("a", "c")] and "gpu-memory-low" not in codes[("b",)]


def test_a_job_of_gpus_with_different_memory_stays_apart_from_one_of_equal_memory() -> None:
    data = json.loads(json.dumps(SNAPSHOTS["h100-550"]))
    mixed = json.loads(json.dumps(data))
    mixed["host"]["hostname"] = "mixed"
    mixed["host"]["gpus"][0]["memory_total_bytes"] = 40 * 2**30  # one GPU smaller than the rest: multi-gpu-mixed
    hosts = [snapshot_host(data, "a.json", "a"), snapshot_host(mixed, "b.json", "b")]
    fleet = judge_fleet(hosts, TABLE, resolve_request(TABLE))
    assert len(fleet.groups) == 2
    assert SNAPSHOT in {h.origin for h in fleet.hosts}


def test_drivers_of_one_branch_and_one_cuda_label_either_side_of_a_minimum_reach_as_each_alone() -> None:
    # CUDA 12.4 needs 550.54.14 for full support: 550.40.07 runs a cu124 build only under
    # minor-version compatibility, 550.127.05 fully, though both nodes' labels say CUDA 12.2.
    hosts = [_patched(0, "H100", "550.40.07", 8, "12.2"), _patched(1, "H100", "550.127.05", 8, "12.2"),
             _patched(2, "H100", "550.40.08", 8, "12.2"), _patched(3, "H100", "550.144.03", 8, "12.2")]  # fmt: skip
    request = resolve_request(TABLE)
    together = _reach(judge_fleet(hosts, TABLE, request))
    alone = [_reach(judge_fleet([host], TABLE, request)) for host in hosts]
    for build, (runs, minor, left) in together.items():
        assert (runs, minor, left) == (
            sum(a[build][0] for a in alone), sum(a[build][1] for a in alone), frozenset().union(*(a[build][2] for a in alone))
        ), build
    assert any(0 < minor < runs for runs, minor, _ in together.values())  # the two kinds of driver do differ somewhere


def _reach(fleet: Any) -> dict[tuple[Any, Any], tuple[int, int, frozenset[str]]]:
    """Each wheel build's reach: (hosts it runs on, of them under minor-version compatibility,
    the hosts it leaves out)."""
    return {
        (c.torch, c.variant): (c.hosts, c.minor_compat_hosts, frozenset(h for left in c.left_out for h in left.hosts))
        for c in fleet.candidates
    }


# Drivers of one branch either side of the table's versions (Table 3's minimums, the minor-version
# floors, the first drivers of a CUDA release), two-part ones among them: hosts of one class share
# a driver's place among those versions, not its patch.
PATCHES = ["470.57.02", "470.256.02", "525.60.13", "525.85.12", "525.147.05", "535.54.03", "535.104.05",
           "535.216.01", "550.40.07", "550.54", "550.54.14", "550.54.15", "550.127.05", "560.27.01", "560.35.03",
           "570.86.10", "570.124.06", "570.133.20", "575.40.01", "575.64.03", "580.20.01", "580.65.06", "580.95.05",
           "590.44.01"]  # fmt: skip
RUNTIME_LABELS = ("nvidia.com/cuda.runtime.major", "nvidia.com/cuda.runtime.minor", "nvidia.com/cuda.runtime-version.major",
                  "nvidia.com/cuda.runtime-version.minor", "nvidia.com/cuda.runtime-version.full")  # fmt: skip


@st.composite
def patched_host(draw: Any, index: int) -> FleetHost:
    """A labelled node on one of PATCHES, whose CUDA labels say what its branch reports, another
    CUDA (GFD read it from a driver it no longer runs), or nothing."""
    gpu = draw(st.sampled_from(["H100", "L40S", "T4"]))
    return _patched(index, gpu, draw(st.sampled_from(PATCHES)), draw(st.integers(1, 2)), draw(st.sampled_from([None, "", "11.8", "12.2", "12.8", "13.0"])))


def _patched(index: int, gpu: str, driver: str, count: int, cuda: Optional[str]) -> FleetHost:
    labels = gfd_labels(gpu, driver, count)
    if cuda is not None:
        for key in RUNTIME_LABELS:
            del labels[key]
        if cuda:
            major, minor = cuda.split(".")
            labels.update({RUNTIME_LABELS[0]: major, RUNTIME_LABELS[1]: minor, RUNTIME_LABELS[2]: major,
                           RUNTIME_LABELS[3]: minor, RUNTIME_LABELS[4]: cuda})  # fmt: skip
    facts = facts_from_labels(labels, node_os="linux", node_arch="amd64")
    return FleetHost(name=f"node-{index}", source="nodes.json", origin=NODE_LABELS, facts=facts, kind=facts)


@st.composite
def patched_fleets(draw: Any) -> list[FleetHost]:
    count = draw(st.integers(2, 16))
    return [draw(st.one_of(patched_host(i), gfd_host(i), snapshot_of_a_host(i))) for i in range(count)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hosts=patched_fleets())
def test_each_builds_reach_over_a_fleet_is_the_sum_of_its_reach_over_each_host_alone(hosts: list[FleetHost]) -> None:
    # Hosts of one GPU model on drivers of different tiers are judged once per build only where
    # every build reads them alike: a build never reaches a host it would not reach alone.
    request = resolve_request(TABLE)
    together = _reach(judge_fleet(hosts, TABLE, request))
    alone = [_reach(judge_fleet([host], TABLE, request)) for host in hosts]
    assert set(together) == set().union(*alone)
    for build, (runs, minor, left) in together.items():
        assert runs == sum(a[build][0] for a in alone if build in a), build
        assert minor == sum(a[build][1] for a in alone if build in a), build
        assert left == frozenset().union(*(a[build][2] for a in alone if build in a)), build


_SIZES = st.sampled_from([None, 0, 16 * 2**30, 24 * 2**30, 80 * 2**30])


@st.composite
def gpu_sets(draw: Any) -> Any:
    from cudadoctor.model.facts import GpuFacts

    names = st.sampled_from(["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "Tesla V100-SXM2-16GB"])
    return tuple(
        GpuFacts(index=i, name=draw(names), compute_capability=draw(st.sampled_from(["9.0", "8.0", None])),
                 memory_total_bytes=draw(_SIZES), mig_enabled=draw(st.sampled_from([None, False])))
        for i in range(draw(st.integers(0, 6)))
    )


@settings(max_examples=200, deadline=None)
@given(base=gpu_sets(), sizes=st.lists(st.lists(_SIZES, min_size=6, max_size=6), min_size=1, max_size=6),
       min_memory=st.sampled_from([None, "20GiB"]), asked=st.booleans())
def test_a_kinds_ranked_gpus_are_verdict_keys_whichever_kind_came_first(base: Any, sizes: list[list[Any]], min_memory: Any, asked: bool) -> None:
    # Grouping finds a kind's memory-ranked GPUs by their other fields and ranks before it copies
    # them: for kinds of one GPU set whose memory sizes differ, in any order, the same GPUs
    # verdict_key gives, one object per value.
    from cudadoctor.fleet.judge import _Rests, verdict_key
    from cudadoctor.model.facts import DriverFacts, HostFacts
    from cudadoctor.model.record import replace

    request = resolve_request(TABLE, min_memory=min_memory) if asked else None
    rests = _Rests(request)
    seen: dict[Any, Any] = {}
    for memory in sizes:
        gpus = tuple(replace(g, memory_total_bytes=m) for g, m in zip(base, memory))
        kind = HostFacts(driver=DriverFacts(), gpus=gpus)
        ranked = rests._ranked_gpus(kind)
        assert ranked == verdict_key(kind, request).gpus
        assert seen.setdefault(ranked, ranked) is ranked  # equal rankings are one object
