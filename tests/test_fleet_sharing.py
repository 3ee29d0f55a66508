"""Hosts whose drivers differ only between two of the table's driver versions share one check
(fleet/share.py): the first host of such a class is checked, the others get its result with
their own driver quoted. Every group's shared result and answer are the ones its own check
gives, and the fleet's whole JSON report is the one it gives when nothing is shared."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudadoctor.app.loader import load_table
from cudadoctor.cli.inputs import json_members_text
from cudadoctor.doctor import check, resolve_request
from cudadoctor.doctor.answer import decide
from cudadoctor.fleet import judge
from cudadoctor.fleet.gfd import facts_from_labels
from cudadoctor.fleet.judge import FleetResult, _Kept, judge_fleet
from cudadoctor.fleet.payload import fleet_members
from cudadoctor.fleet.share import SharedChecks, driver_class, quoted_apart, table_drivers
from cudadoctor.fleet.sources import NODE_LABELS, SNAPSHOT, FleetHost, snapshot_host
from cudadoctor.model.facts import KernelModuleFacts, SystemFacts
from cudadoctor.model.record import replace
from cudadoctor.model.versions import DriverVersion
from fleet_nodes import CUDA_OF_BRANCH, GPUS, gfd_labels
from helpers import HOSTS

TABLE = load_table()
TODAY = "2026-12-02"
SNAPSHOTS = {p.stem: json.loads(p.read_text()) for p in sorted(HOSTS.glob("*.json"))}
BRANCHES = tuple(int(branch) for branch in CUDA_OF_BRANCH)  # the branches GFD's labels are made for here
# Drivers beside the table's own versions: one below, the version, one above (where a class starts and ends).
def _text(padded: tuple[int, ...]) -> str:
    numbers = list(padded)
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return ".".join(f"{n:02d}" if i == 2 else str(n) for i, n in enumerate(numbers))


TABLE_VERSIONS = [_text(v) for v in table_drivers(TABLE) if v[0] in BRANCHES]


def _node(index: int, gpu: str, driver: str, count: int) -> FleetHost:
    driver = driver if "." in driver else driver + ".00"  # GFD labels a driver's major and minor
    facts = facts_from_labels(gfd_labels(gpu, driver, count), node_os="linux", node_arch="amd64")
    return FleetHost(name=f"node-{index}", source="nodes.json", origin=NODE_LABELS, facts=facts, kind=facts)


def _snapshot(index: int, name: str, driver: str) -> FleetHost:
    data = json.loads(json.dumps(SNAPSHOTS[name]))
    data["host"]["hostname"] = f"host-{index}"
    if data["host"].get("driver", {}).get("driver_version"):
        data["host"]["driver"]["driver_version"] = driver
    return snapshot_host(data, f"h{index}.json", f"h{index}")


def _report(result: FleetResult) -> str:
    return "".join(json_members_text(fleet_members(result)))


def _unshared(hosts: list[FleetHost], request: Any, monkeypatch: pytest.MonkeyPatch) -> FleetResult:
    class Alone(SharedChecks):
        def key(self, rest: Any, raw: Any, facts: Any) -> None:
            return None

    with monkeypatch.context() as patched:
        patched.setattr(judge, "SharedChecks", Alone)
        return judge_fleet(hosts, TABLE, request)


def _assert_each_group_is_its_own_check(result: FleetResult, request: Any) -> None:
    for group in result.groups:
        if group.facts is None:
            continue
        own = check(group.facts, TABLE, request)
        assert group.result == _Kept()(own), group.driver
        assert group.answer == decide(own, TABLE), group.driver


def _drivers_near_table_versions() -> Iterator[str]:
    for text in TABLE_VERSIONS:
        numbers = DriverVersion.parse(text).numbers
        yield text
        if len(numbers) == 3:
            yield f"{numbers[0]}.{numbers[1]}.{numbers[2] + 1:02d}"
            if numbers[2]:
                yield f"{numbers[0]}.{numbers[1]}.{numbers[2] - 1:02d}"


def test_hosts_between_the_same_table_drivers_are_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = judge.check
    monkeypatch.setattr(judge, "check", lambda *a, **k: calls.append(1) or real(*a, **k))
    request = resolve_request(TABLE, today=TODAY)
    hosts = [_node(i, "H100", f"550.{130 + i}.{i:02d}", 8) for i in range(10)]
    result = judge_fleet(hosts, TABLE, request)
    assert len(result.groups) == 10  # each driver is its own group, as the report shows it
    assert len(calls) == 1
    assert [g.driver for g in sorted(result.groups, key=lambda g: g.names)] == [f"550.{130 + i}.{i:02d}" for i in range(10)]
    _assert_each_group_is_its_own_check(result, request)


def test_a_driver_that_is_a_table_version_is_checked_on_its_own() -> None:
    version = TABLE.cuda_releases[-1].min_driver_linux
    assert driver_class(str(version), table_drivers(TABLE)) is None
    assert driver_class("not-a-driver", table_drivers(TABLE)) is None
    below, above = driver_class("550.54.13", table_drivers(TABLE)), driver_class("550.54.16", table_drivers(TABLE))
    assert below is not None and above is not None and below != above


def test_a_request_with_driver_constraints_from_outside_the_table_shares_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = judge.check
    monkeypatch.setattr(judge, "check", lambda *a, **k: calls.append(1) or real(*a, **k))
    request = resolve_request(TABLE, today=TODAY, requirements=("cuda>=12.2 brand=tesla,driver>=550,driver<551",))
    hosts = [_node(i, "H100", f"550.{130 + i}.{i:02d}", 8) for i in range(4)]
    judge_fleet(hosts, TABLE, request)
    assert len(calls) == 4


def test_a_host_whose_facts_carry_another_driver_version_is_checked_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel module's version is a threshold of the host's own (a module that does not match
    its library fails): hosts that carry one are never given another host's result."""
    calls = []
    real = judge.check
    monkeypatch.setattr(judge, "check", lambda *a, **k: calls.append(1) or real(*a, **k))
    request = resolve_request(TABLE, today=TODAY)
    base = _snapshot(0, "h100-550", "550.100.01").facts
    assert base is not None
    system = SystemFacts(kernel_module=KernelModuleFacts(loaded=True, version="550.100.01"), os="linux", machine="x86_64")
    hosts = []
    for i, driver in enumerate(("550.100.01", "550.100.02", "550.100.03")):  # the first matches its module
        facts = replace(base, hostname=f"host-{i}", system=system,
                        driver=replace(base.driver, driver_version=driver, nvml_version=None))
        hosts.append(FleetHost(name=f"host-{i}", source=f"h{i}.json", origin=SNAPSHOT, facts=facts))
    result = judge_fleet(hosts, TABLE, request)
    assert len(calls) == 3
    _assert_each_group_is_its_own_check(result, request)
    verdicts = {g.driver: g.verdict for g in result.groups}
    assert verdicts["550.100.01"] != verdicts["550.100.02"]  # the module mismatch is the host's own


def test_hosts_whose_gpus_differ_in_memory_keep_their_own_sizes_in_words() -> None:
    """The verdict key ranks memory sizes; multi-gpu-mixed quotes them: such hosts are not shared."""
    request = resolve_request(TABLE, today=TODAY)
    base = _snapshot(0, "h100-550", "550.60.01").facts
    assert base is not None and len(base.gpus) >= 2
    hosts = []
    for i, (driver, sizes) in enumerate((("550.60.01", (80, 40)), ("550.70.01", (94, 64)))):
        gpus = tuple(replace(g, memory_total_bytes=sizes[j % 2] * 2**30) for j, g in enumerate(base.gpus))
        facts = replace(base, hostname=f"host-{i}", gpus=gpus, driver=replace(base.driver, driver_version=driver, nvml_version=None))
        hosts.append(FleetHost(name=f"host-{i}", source=f"h{i}.json", origin=SNAPSHOT, facts=facts))
    result = judge_fleet(hosts, TABLE, request)
    _assert_each_group_is_its_own_check(result, request)
    words = {g.driver: " ".join(f.title + " " + f.detail for f in g.result.findings if f.code == "multi-gpu-mixed")
             for g in result.groups if g.result is not None}
    assert "64 GiB" in words["550.70.01"] and "40 GiB" not in words["550.70.01"]


def test_a_driver_the_tables_words_quote_is_checked_on_its_own() -> None:
    """570.86.10 is quoted by a table note (the driver a Triton matrix prints): a host on it is not
    a representative whose swap would rewrite that note for a host on 570.86.15."""
    assert driver_class("570.86.10", table_drivers(TABLE)) is None
    request = resolve_request(TABLE, family="ngc-pytorch", torch="2.6", today=TODAY)
    hosts = [_node(0, "H100", "570.86.10", 8), _node(1, "H100", "570.86.15", 8)]
    _assert_each_group_is_its_own_check(judge_fleet(hosts, TABLE, request), request)


def test_every_group_of_a_fleet_around_every_table_driver_gets_its_own_checks_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    request = resolve_request(TABLE, today=TODAY)
    hosts = []
    for driver in _drivers_near_table_versions():
        for gpu in ("H100", "RTX5090", "V100", "A100"):
            hosts.append(_node(len(hosts), gpu, driver, 2))
            hosts.append(_node(len(hosts), gpu, driver.rsplit(".", 1)[0] + ".77" if driver.count(".") == 2 else driver, 2))
    for name in ("h100-550", "k80-470", "rtx5090-570", "driver-mismatch"):
        if name in SNAPSHOTS:
            for driver in ("550.54.14", "550.54.15", "550.54.16", "550.120.01", "570.86.10", "470.82.01"):
                hosts.append(_snapshot(len(hosts), name, driver))
    shared = judge_fleet(hosts, TABLE, request)
    _assert_each_group_is_its_own_check(shared, request)
    assert _report(shared) == _report(_unshared(hosts, request, monkeypatch))


@st.composite
def drivers(draw: Any) -> str:
    if draw(st.booleans()):
        return draw(st.sampled_from(TABLE_VERSIONS))
    branch = draw(st.sampled_from(BRANCHES))
    minor = draw(st.integers(0, 250))
    return f"{branch}.{minor}" if draw(st.integers(0, 5)) == 0 else f"{branch}.{minor}.{draw(st.integers(0, 99)):02d}"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    picks=st.lists(st.tuples(st.sampled_from(sorted(GPUS)), drivers(), st.integers(1, 8), st.integers(0, 250)), min_size=2, max_size=12),
    torch=st.sampled_from([None, "2.4", "2.8", "2.15"]),
)
def test_shared_fleet_reports_are_the_unshared_ones(picks: list[tuple[str, str, int, int]], torch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    request = resolve_request(TABLE, torch=torch, today=TODAY)
    hosts = []
    for gpu, driver, count, other_minor in picks:
        driver = "470.256.02" if gpu == "K80" else driver
        hosts.append(_node(len(hosts), gpu, driver, count))
        # A twin on another driver of its branch: in the same class or not, as the table's versions fall.
        hosts.append(_node(len(hosts), gpu, f"{driver.split('.')[0]}.{other_minor}.{other_minor % 97:02d}", count))
    shared = judge_fleet(hosts, TABLE, request)
    _assert_each_group_is_its_own_check(shared, request)
    assert _report(shared) == _report(_unshared(hosts, request, monkeypatch))


@pytest.mark.parametrize(
    ("text", "driver", "pieces"),
    [
        ("Driver 470.10.03 supports CUDA 11.4; your driver 470.10.03.", "470.10.03", ("Driver ", " supports CUDA 11.4; your driver ", ".")),
        ("needs 550.54.15 or newer", "550.54", None),  # a longer version is another driver
        ("R1550.54 ", "550.54", None),
        ("(550.54)", "550.54", ("(", ")")),
        ("at 570.86.10, 570.86.100", "570.86.10", ("at ", ", 570.86.100")),
    ],
)
def test_only_whole_quotes_of_the_driver_are_swapped(text: str, driver: str, pieces: Any) -> None:
    assert quoted_apart(text, driver) == pieces


def test_a_result_that_cannot_be_rewritten_is_not_shared() -> None:
    """A set (no order to rebuild) or a DriverVersion (its numbers) that quotes the driver: the
    class's other hosts are checked themselves."""
    request = resolve_request(TABLE, today=TODAY)
    facts = _node(0, "H100", "550.130.01", 8).facts
    other = _node(1, "H100", "550.131.01", 8).facts
    assert facts is not None and other is not None
    for odd in (frozenset({"driver 550.130.01"}), DriverVersion.parse("550.130.01")):
        shared = SharedChecks(TABLE, request)
        shared.put("class", facts, odd, None)  # type: ignore[arg-type]
        assert shared.get("class", other) is None
    plain = SharedChecks(TABLE, request)
    plain.put("class", facts, ("driver 550.130.01 here",), None)  # type: ignore[arg-type]
    assert plain.get("class", other) == (("driver 550.131.01 here",), None)


def test_a_finding_every_result_shares_is_still_rewritten_where_it_quotes_the_driver() -> None:
    """The fleet's stand-ins for passing findings are held as they are by every class's result
    (SharedChecks.hold_inert): one that quotes a class's driver, or holds a host's facts, is still
    rewritten for each host of the class."""
    from cudadoctor.model.findings import OK, Finding

    request = resolve_request(TABLE, today=TODAY)
    facts = _node(0, "H100", "550.130.01", 8).facts
    other = _node(1, "H100", "550.131.01", 8).facts
    assert facts is not None and other is not None
    quoting = Finding(code="driver-ok", severity=OK, title="", subject="driver 550.130.01")
    plain = Finding(code="gpu-ok", severity=OK, title="", subject="GPU 0")
    shared = SharedChecks(TABLE, request)
    shared.hold_inert(quoting)
    shared.hold_inert(plain)
    shared.hold_inert(facts)
    shared.put("class", facts, (facts, quoting, plain), None)  # type: ignore[arg-type]
    got = shared.get("class", other)
    assert got is not None
    rewritten, _ = got
    assert rewritten[0] is other and rewritten[1].subject == "driver 550.131.01" and rewritten[2] is plain  # type: ignore[index]
