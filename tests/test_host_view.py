"""The host view: facts parsed once, and answers that stay right for copies and other objects."""

from __future__ import annotations

import copy

from helpers import host

from cudadoctor.host.view import HostView
from cudadoctor.app.loader import load_snapshot, load_table
from cudadoctor.model.record import replace
from cudadoctor.model.versions import ComputeCapability, CudaVersion, DriverVersion

TABLE = load_table()


def test_the_view_parses_the_facts_into_typed_values():
    view = HostView.of(load_snapshot(host("v100-h100-550")), TABLE)
    assert view.driver == DriverVersion.parse("550.54.15") and view.nvml_cuda == CudaVersion.parse("12.4")
    assert [view.cc(g) for g in view.gpus_in_scope] == [ComputeCapability(7, 0), ComputeCapability(9, 0)]
    assert view.support(CudaVersion.parse("12.4")).tier == "full"
    assert view.support(CudaVersion.parse("12.8")).tier == "minor-compat"


def test_answers_hold_for_an_equal_gpu_object_and_for_copies():
    view = HostView.of(load_snapshot(host("h100-550")), TABLE)
    gpu = view.gpus[0]
    twin = replace(gpu)  # equal, but another object
    assert twin is not gpu and view.cc(twin) == view.cc(gpu) == ComputeCapability(9, 0)
    copied = copy.deepcopy(view)
    assert copied.cc(copied.gpus[0]) == ComputeCapability(9, 0)
    assert copied.model(copied.gpus[0]) is not None


def test_a_replaced_view_does_not_keep_the_old_answers():
    view = HostView.of(load_snapshot(host("h100-535")), TABLE)
    cuda = CudaVersion.parse("12.9")
    assert view.support(cuda).tier == "minor-compat"
    upgraded = replace(view, driver=DriverVersion.parse("580.65.06"), driver_cuda=CudaVersion.parse("13.0"))
    assert upgraded.support(cuda).tier == "full"


def test_the_driver_support_is_one_answer_per_cuda_minor_whichever_object_asks():
    view = HostView.of(load_snapshot(host("h100-535")), TABLE)
    first, equal, patch = CudaVersion.parse("12.9"), CudaVersion.parse("12.9"), CudaVersion.parse("12.9.1")
    assert view.support(first) is view.support(equal) is view.support(patch) is view.support(first)
    assert view.support(CudaVersion.parse("12.2")).tier == "full" and view.support(first).tier == "minor-compat"


def test_hosts_that_report_one_driver_text_share_its_parsed_version_and_a_bad_text_stays_unparsed():
    facts = load_snapshot(host("h100-550"))
    first, second = (HostView.of(replace(facts, hostname=name), TABLE) for name in ("a", "b"))
    assert first.driver is second.driver and first.nvml_cuda is second.nvml_cuda
    assert first.driver == DriverVersion.parse("550.54.15")
    bad = replace(facts, driver=replace(facts.driver, driver_version="5x0.1"))
    assert [HostView.of(replace(bad, hostname=name), TABLE).driver for name in ("c", "d")] == [None, None]


def test_the_parsed_texts_kept_per_table_stay_bounded():
    table = replace(TABLE)  # its own memos
    facts = load_snapshot(host("h100-550"))
    for i in range(5000):
        HostView.of(replace(facts, driver=replace(facts.driver, driver_version=f"550.{i}")), table)
    kept = table.memo("host.view.parsed-driver-versions")
    assert 0 < len(kept) <= 4096 and kept["550.4999"] == DriverVersion.parse("550.4999")


def test_a_target_cuda_text_is_parsed_once_per_table_and_one_that_is_no_version_is_none():
    from cudadoctor.host.view import parsed_cuda

    assert parsed_cuda(TABLE, "12.8") == CudaVersion.parse("12.8") and parsed_cuda(TABLE, "12.8") is parsed_cuda(TABLE, "12.8")
    assert [parsed_cuda(TABLE, text) for text in ("12.x", "12.x", "")] == [None, None, None]
