"""CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER -> the GPUs CUDA enumerates (pure)."""

from __future__ import annotations

import pytest

from cudadoctor.model.facts import GpuFacts, HostFacts, MigDeviceFacts, SystemFacts, DriverFacts
from cudadoctor.host.visibility import (
    AMBIGUOUS_ID,
    DUPLICATE,
    EMPTY,
    MIXED_IDS,
    NEGATIVE,
    OUT_OF_RANGE,
    UNKNOWN_ID,
    resolve,
    visibility_of,
    visible_devices_excluding,
)


def gpu(index: int, name: str = "NVIDIA H100 80GB HBM3", cc: str = "9.0", bus: str = "", mig=()) -> GpuFacts:
    return GpuFacts(
        index=index,
        name=name,
        compute_capability=cc,
        uuid=f"GPU-{index}{index}aa{index}-0000-0000-0000-00000000000{index}",
        pci_bus_id=bus or f"00000000:{0x10 * (index + 1):02X}:00.0",
        mig_devices=mig,
    )


FOUR = tuple(gpu(i) for i in range(4))


def indexes(view) -> list[int]:
    return [g.index for g in view.gpus]


def test_unset_sees_every_gpu():
    view = resolve(FOUR, None)
    assert indexes(view) == [0, 1, 2, 3] and not view.restricted and view.reason is None


@pytest.mark.parametrize(
    "value, seen, reason, ignored",
    [
        ("", [], EMPTY, ()),
        ("  ", [], EMPTY, ()),
        ("-1", [], NEGATIVE, ("-1",)),
        ("2,0", [2, 0], None, ()),
        ("2, 0", [2, 0], None, ()),
        ("1gpu,3", [1, 3], None, ()),  # strtoul reads the leading digits
        ("1,-1,2", [1], NEGATIVE, ("-1", "2")),
        ("1,x,2", [1], NEGATIVE, ("x", "2")),
        ("3,4,0", [3], OUT_OF_RANGE, ("4", "0")),
        ("9", [], OUT_OF_RANGE, ("9",)),
        ("0,1,0", [], DUPLICATE, ("0", "1", "0")),
        ("1,01", [], DUPLICATE, ("1", "01")),
    ],
)
def test_ordinals(value, seen, reason, ignored):
    view = resolve(FOUR, value)
    assert indexes(view) == seen
    assert view.reason == reason
    assert view.ignored == ignored


def test_uuid_prefixes_select_gpus():
    view = resolve(FOUR, f"{FOUR[3].uuid[:8]},{FOUR[1].uuid}")
    assert indexes(view) == [3, 1] and view.reason is None


def test_ambiguous_uuid_prefix_ends_the_list():
    view = resolve(FOUR, f"{FOUR[2].uuid},GPU-")
    assert indexes(view) == [2] and view.reason == AMBIGUOUS_ID and view.ignored == ("GPU-",)


def test_unknown_uuid_ends_the_list():
    view = resolve(FOUR, "GPU-ffffffff,GPU-11")
    assert indexes(view) == [] and view.reason == UNKNOWN_ID


def test_uuid_list_ends_at_an_ordinal():
    view = resolve(FOUR, f"{FOUR[1].uuid},0")
    assert indexes(view) == [1] and view.reason == MIXED_IDS


def test_repeated_uuid_empties_the_list():
    view = resolve(FOUR, f"{FOUR[1].uuid},{FOUR[1].uuid[:10]}")
    assert view.gpus == () and view.reason == DUPLICATE


def test_pci_bus_order_renumbers():
    # NVML index 0 sits on the higher bus here; PCI_BUS_ID order puts GPU 1 first.
    gpus = (gpu(0, bus="00000000:81:00.0"), gpu(1, bus="00000000:07:00.0"))
    assert indexes(resolve(gpus, "0", "PCI_BUS_ID")) == [1]
    assert indexes(resolve(gpus, "0")) == [0]


def test_mixed_models_make_fastest_first_ordinals_ambiguous():
    gpus = (gpu(0, "Tesla K80", "3.7"), gpu(1))
    assert resolve(gpus, "1").order_ambiguous
    assert not resolve(gpus, "1", "PCI_BUS_ID").order_ambiguous
    assert not resolve(FOUR, "1").order_ambiguous
    assert not resolve(gpus, gpus[1].uuid).order_ambiguous


def test_mig_ids_select_instances_and_their_parent():
    mig = (MigDeviceFacts(0, "MIG-aaaa-1", "3g.40gb", 40 << 30), MigDeviceFacts(1, "MIG-bbbb-2", "3g.40gb", 40 << 30))
    gpus = (gpu(0), gpu(1, mig=mig))
    view = resolve(gpus, "MIG-bbbb")
    assert indexes(view) == [1] and [m.uuid for _, m in view.mig_devices] == ["MIG-bbbb-2"]
    assert resolve(gpus, "MIG-cccc").reason == UNKNOWN_ID
    assert resolve(gpus, "MIG-aaaa-1,MIG-aaaa-1").reason == DUPLICATE


def host(gpus, env=(), source="nvml") -> HostFacts:
    return HostFacts(driver=DriverFacts(nvml_state="ok", source=source), gpus=gpus, system=SystemFacts(environment=tuple(env)))


def test_what_if_gpus_ignore_this_shells_environment():
    from cudadoctor.model.record import replace

    gpus = tuple(replace(g, source="what-if") for g in FOUR)
    assert len(visibility_of(host(gpus, [("CUDA_VISIBLE_DEVICES", "")])).gpus) == 4


def test_exclusion_hint_keeps_the_physical_ordinals():
    facts = host(FOUR, [("CUDA_VISIBLE_DEVICES", "3,1,2")])
    assert visible_devices_excluding(facts, [FOUR[1]]) == "CUDA_VISIBLE_DEVICES=3,2"
    assert visible_devices_excluding(host(FOUR), [FOUR[0]]) == "CUDA_VISIBLE_DEVICES=1,2,3"


def test_exclusion_hint_keeps_uuids_when_selected_by_uuid():
    facts = host(FOUR, [("CUDA_VISIBLE_DEVICES", f"{FOUR[0].uuid},{FOUR[2].uuid}")])
    assert visible_devices_excluding(facts, [FOUR[0]]) == f"CUDA_VISIBLE_DEVICES={FOUR[2].uuid}"


def test_exclusion_hint_pins_pci_order_on_mixed_hosts():
    gpus = (gpu(0, "Tesla K80", "3.7"), gpu(1), gpu(2))
    assert visible_devices_excluding(host(gpus), [gpus[0]]) == "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=1,2"


def test_no_exclusion_hint_when_nothing_would_be_left():
    assert visible_devices_excluding(host(FOUR[:1]), [FOUR[0]]) is None
