"""model/record.py: frozen value classes behave as frozen dataclasses do where cudadoctor relies on it."""

from __future__ import annotations

from typing import Optional

import pytest

from cudadoctor.model.facts import GpuFacts, HostFacts, SystemFacts
from cudadoctor.model.record import FrozenInstanceError, field, fields, is_record, record, replace
from cudadoctor.model.versions import ComputeCapability, CudaVersion


@record
class Point:
    """A value with a required field, defaults and a factory."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()
    seen: list[int] = field(default_factory=list, repr=False)


def test_construction_positional_keyword_and_defaults():
    assert Point(1) == Point(x=1, y=0)
    assert Point(1, 2).y == 2 and Point(1, y=3).y == 3
    assert Point(1).seen == [] and Point(1).seen is not Point(1).seen  # a fresh factory value each time
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=())"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: Point(), "missing required argument 'x'"),
        (lambda: Point(1, 2, (), [], 5), "takes 4 arguments"),
        (lambda: Point(1, x=2), "multiple values for argument 'x'"),
        (lambda: Point(1, z=2), "unexpected keyword argument 'z'"),
    ],
)
def test_bad_construction_is_a_type_error(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_immutable_hashable_and_equal_by_value():
    point = Point(1, 2)
    with pytest.raises(FrozenInstanceError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del point.y
    assert Point(1) != Point(2) and Point(1) != (1, 0, (), [])
    pair = CudaVersion((12, 4))
    assert hash(GpuFacts(index=0, name="A100")) == hash(GpuFacts(index=0, name="A100"))
    assert {GpuFacts(index=0, name="A100"): "here"}[GpuFacts(index=0, name="A100")] == "here"
    assert {pair: 1}[CudaVersion.parse("12.4")] == 1


def test_replace_and_fields():
    point = Point(1, 2)
    moved = replace(point, y=5)
    assert (moved.x, moved.y, point.y) == (1, 5, 2)
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(point, z=1)
    assert [f.name for f in fields(Point)] == ["x", "y", "tags", "seen"]
    assert [f.required for f in fields(point)] == [True, False, False, False]
    assert is_record(point) and not is_record(Point) and not is_record((1, 2))


def test_a_required_field_after_a_default_is_refused():
    with pytest.raises(TypeError, match="required field 'b' follows"):

        @record
        class Bad:
            a: int = 0
            b: int


def test_order_and_custom_equality():
    assert ComputeCapability(8, 6) > ComputeCapability(8, 0) > ComputeCapability(7, 5)
    assert sorted([ComputeCapability(9, 0), ComputeCapability(7, 0)]) == [ComputeCapability(7, 0), ComputeCapability(9, 0)]
    # CudaVersion keeps its own equality: trailing zeros do not matter
    assert CudaVersion.parse("12.0") == CudaVersion.parse("12") and hash(CudaVersion.parse("12.0")) == hash(CudaVersion.parse("12"))


def test_post_init_validates():
    from cudadoctor.model.findings import Finding

    with pytest.raises(ValueError, match="unknown severity"):
        Finding(code="x", severity="fatal", title="t")


def test_nested_facts_keep_their_defaults():
    host = HostFacts(gpus=(GpuFacts(index=0, name="A100"),), system=SystemFacts())
    assert host.system is not None and host.system.kernel_module.loaded is None
    assert replace(host, hostname="n1").gpus == host.gpus
    optional: Optional[int] = None
    assert GpuFacts(index=0).memory_total_bytes is optional


def test_inheritance_keeps_each_field_once_and_a_redeclared_default_wins():
    @record
    class Base:
        x: int
        y: int = 1

    @record
    class Middle(Base):
        z: int = 2

    class Plain(Middle):  # not itself a record: its record bases still count once
        pass

    @record
    class Leaf(Plain):
        y: int = 99
        w: int = 3

    assert [f.name for f in fields(Leaf)] == ["x", "y", "z", "w"]
    assert Leaf(0) == Leaf(x=0, y=99, z=2, w=3)
    assert Middle(1, 2, 3).z == 3


def test_a_mutable_default_is_refused_and_own_methods_are_kept():
    with pytest.raises(ValueError, match="mutable default"):

        @record
        class Bad:
            xs: list = []  # noqa: RUF012

    @record
    class Own:
        v: int

        def __eq__(self, other: object) -> bool:
            return True

        def __repr__(self) -> str:
            return "mine"

    assert Own(1) == Own(2) and repr(Own(1)) == "mine"
    assert Own.__match_args__ == ("v",)


def test_compute_capabilities_do_not_order_against_other_types():
    with pytest.raises(TypeError):
        ComputeCapability(8, 0) < 3  # noqa: B015


def test_a_kept_property_is_worked_out_once_per_instance_and_again_for_a_replaced_copy():
    from cudadoctor.model.record import kept

    calls: list[int] = []

    @record
    class Counted:
        x: int

        @kept
        def doubled(self) -> int:
            calls.append(self.x)
            return self.x * 2

    first = Counted(3)
    assert (first.doubled, first.doubled) == (6, 6) and calls == [3]
    assert replace(first, x=4).doubled == 8 and calls == [3, 4]  # the copy does not inherit the kept value
    assert first == Counted(3) and hash(first) == hash(Counted(3))  # a kept value is no field


def test_positional_construction_fills_defaults_and_runs_post_init():
    @record
    class Checked:
        a: int
        b: int = 7
        c: tuple[int, ...] = ()

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")

    assert (Checked(1).b, Checked(1, 2).b, Checked(1, 2, (3,)).c) == (7, 2, (3,))
    assert Checked(1) == Checked(a=1, b=7, c=())
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)
    with pytest.raises(TypeError, match="missing required argument 'a'"):
        Checked()


def test_a_maker_builds_from_field_values_what_the_constructor_builds_and_runs_post_init():
    from cudadoctor.model.record import field_values, kept, maker

    @record
    class Checked:
        a: int
        b: int = 7

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")

        @kept
        def doubled(self) -> int:
            return self.a * 2

    first = Checked(3)
    assert first.doubled == 6
    values = field_values(first)
    assert list(values.items()) == [("a", 3), ("b", 7)]  # the fields only: no kept value
    values["a"] = 4
    made = maker(Checked)(values)
    assert made == Checked(4) and made.doubled == 8 and type(made) is Checked
    with pytest.raises(FrozenInstanceError):
        made.a = 5  # type: ignore[misc]
    with pytest.raises(ValueError, match="negative"):
        maker(Checked)({"a": -1, "b": 7})


def _often() -> type:
    """A fresh record class with a field of every kind: one named like a builtin the compiled
    body calls, a default, a factory, and a check."""

    @record
    class Often:
        type: str
        x: int
        y: int = 0
        seen: list[int] = field(default_factory=list)

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("negative")

    return Often


def _built_often(cls: type) -> type:
    """The class, once built as often as it takes to get its compiled __init__."""
    from cudadoctor.model import record as record_module

    generic = cls.__init__
    for _ in range(record_module._COMPILE_AFTER):
        cls("t", 1)
    assert cls.__init__ is not generic and cls.__init__.__qualname__.endswith("Often.__init__")
    return cls


def test_a_class_built_often_is_built_by_a_compiled_init_that_makes_the_same_records():
    Often = _often()
    expected = [Often("t", 1), Often("t", 1, 2), Often(type="t", x=1, y=2), Often("t", x=1, seen=[3])]
    _built_often(Often)
    assert [Often("t", 1), Often("t", 1, 2), Often(type="t", x=1, y=2), Often("t", x=1, seen=[3])] == expected
    assert Often("t", 1).seen == [] and Often("t", 1).seen is not Often("t", 1).seen  # a fresh factory value each time
    assert repr(Often("t", 1)).endswith("Often(type='t', x=1, y=0, seen=[])")
    assert replace(Often("t", 1), y=4) == Often("t", 1, 4)
    with pytest.raises(ValueError, match="negative"):
        Often("t", -1)
    with pytest.raises(FrozenInstanceError):
        Often("t", 1).x = 2


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda cls: cls("t"), "Often\\(\\) missing required argument 'x'"),
        (lambda cls: cls(x=1), "Often\\(\\) missing required argument 'type'"),
        (lambda cls: cls("t", 1, 2, [], 5), "Often\\(\\) takes 4 arguments, 5 were given"),
        (lambda cls: cls("t", 1, z=2), "Often\\(\\) got an unexpected keyword argument 'z'"),
        (lambda cls: cls("t", 1, type="u"), "multiple values for argument 'type'"),
    ],
)
def test_a_compiled_init_refuses_a_bad_call_as_the_generic_one_does(call, message):
    Often = _built_often(_often())
    with pytest.raises(TypeError, match=message):
        call(Often)


def test_a_plain_subclass_of_a_compiled_record_is_built_by_the_generic_path():
    class Plain(_built_often(_often())):  # type: ignore[misc]  # not itself a record: the compiled __init__ hands it on
        def __post_init__(self) -> None:
            object.__setattr__(self, "checked", True)

    built = Plain("t", 1, y=2)
    assert (type(built).__name__, built.y, built.seen, built.__dict__.get("checked")) == ("Plain", 2, [], True)


def test_replace_copies_the_fields_and_drops_what_was_kept_beside_them():
    version = CudaVersion((12, 4))
    assert (str(version), hash(version)) == ("12.4", hash(CudaVersion((12, 4))))  # its text and hash now kept in its dict
    moved = replace(version, numbers=(12, 8))
    assert (str(moved), moved, hash(moved)) == ("12.8", CudaVersion((12, 8)), hash(CudaVersion((12, 8))))
    point = Point(1, 2)
    assert replace(point, y=3).__dict__ == {"x": 1, "y": 3, "tags": (), "seen": []}


@pytest.mark.parametrize("name", ["class", "_r_self", "_r_set", "a-b"])
def test_a_class_whose_field_names_cannot_be_parameters_keeps_the_generic_init(name):
    from cudadoctor.model import record as record_module

    odd = record(type("Odd", (), {"__annotations__": {name: int, "other": int}, "__module__": __name__}))
    generic = odd.__init__
    for i in range(record_module._COMPILE_AFTER + 5):
        built = odd(**{name: i, "other": 1})
    assert odd.__init__ is generic
    assert getattr(built, name) == record_module._COMPILE_AFTER + 4 and built.other == 1
