"""A thousand --gpu values are judged in linear work (issue 12, item 6): the check used to walk a
tuple of GPU records with tuple.index once per blocked GPU, for every blocked GPU (minutes for
1000 GPUs). The assertions count calls and comparisons, not time."""

from __future__ import annotations

from helpers import core_check, host

from cudadoctor.host import view as host_view
from cudadoctor.host.whatif import apply_what_if
from cudadoctor.app.loader import load_snapshot, load_table
from cudadoctor.model.facts import GpuFacts

SPECS = ["A100", "H100", "8.6", "T4", "V100", "RTX 4090", "K80", "GTX 1080 Ti", "3.7", "12.0"]


def test_many_mixed_gpus_cost_linear_work(monkeypatch) -> None:
    table = load_table()
    gpus = [SPECS[i % len(SPECS)] for i in range(600)]
    facts = apply_what_if(load_snapshot(host("h100-550")), table, None, gpus)

    calls = {"excluding": 0, "eq": 0}
    real_excluding = host_view.visible_devices_excluding

    def counting_excluding(*args, **kwargs):
        calls["excluding"] += 1
        return real_excluding(*args, **kwargs)

    real_eq = GpuFacts.__eq__

    def counting_eq(self, other):
        calls["eq"] += 1
        return real_eq(self, other)

    monkeypatch.setattr(host_view, "visible_devices_excluding", counting_excluding)
    monkeypatch.setattr(GpuFacts, "__eq__", counting_eq)
    result = core_check(facts, table, torch="2.15")  # a release without K80 code: every K80 is blocked
    blocked = [f for f in result.findings if f.code == "gpu-arch-not-built"]
    assert len(blocked) > 100  # the case is the slow one: many blocked GPUs, each with the hint
    assert calls["excluding"] <= 3, calls
    assert calls["eq"] < 10 * len(gpus), calls
    hints = {f.hint for f in blocked}
    assert any("CUDA_VISIBLE_DEVICES=" in (h or "") for h in hints)


def test_the_hint_still_names_the_right_ordinals() -> None:
    table = load_table()
    facts = apply_what_if(load_snapshot(host("h100-550")), table, None, ["H100", "K80", "H100", "K80"])  # same hint as before the fix
    result = core_check(facts, table, torch="2.15")
    hints = [f.hint or "" for f in result.findings if f.code == "gpu-arch-not-built"]
    assert hints and all("CUDA_VISIBLE_DEVICES=0,2" in h and "PCI_BUS_ID" in h for h in hints), hints
