"""The versioned JSON form of HostFacts (a host snapshot), both ways. Pure: text or parsed JSON in,
facts out; reading the file is the loader's job (cudadoctor.app.loader.load_snapshot).

Snapshots round-trip exactly, so a host probed on one machine can be checked on another. Unknown
keys are ignored, so a snapshot written by a newer version of the same schema still loads.
"""

from __future__ import annotations

import math
import types

from .facts import NVML_STATES, HostFacts
from .record import fields, is_record
from .text import has_lone_surrogate, quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SNAPSHOT_SCHEMA = 1
SNAPSHOT_KIND = "cudadoctor-host-snapshot"
INT_LIMIT = 2**64  # the largest integer a snapshot may hold (NVML's widest fields are 64-bit)


class SnapshotError(ValueError):
    """A snapshot that is not a cudadoctor host snapshot of a schema we read."""


def to_jsonable(value: Any) -> Any:
    """A tree of records as plain JSON types (tuples become lists)."""
    if is_record(value):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


_FIELD_TYPES: dict[type, dict[str, Any]] = {}


def field_types(cls: type) -> dict[str, Any]:
    """The resolved annotations of a facts class; evaluated once per class, not once per snapshot."""
    hints = _FIELD_TYPES.get(cls)
    if hints is None:
        import typing

        # The facts modules import typing's names for type checkers only (a check that reads no
        # snapshot imports no typing): their annotations find them here.
        names = {name: getattr(typing, name) for name in ("Any", "Optional", "Union", "Sequence", "Mapping")}
        hints = _FIELD_TYPES[cls] = typing.get_type_hints(cls, localns=names)
    return hints


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def from_jsonable(cls: Any, data: Any, path: str = "$") -> Any:
    """Rebuild a tree of records from JSON types, checking every field's type.

    Raises SnapshotError naming the JSON path of the first bad value. Unknown keys are ignored
    so that snapshots written by newer versions of the same schema still load.
    """
    import typing  # here: only a snapshot being read needs it

    origin = typing.get_origin(cls)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(cls)
        if data is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return from_jsonable(arg, data, path)
            except SnapshotError as exc:
                errors.append(exc)
        raise errors[0] if errors else SnapshotError(f"{path}: unexpected null")
    if origin is tuple:
        args = typing.get_args(cls)
        if not isinstance(data, list):
            raise SnapshotError(f"{path}: expected a list, got {type(data).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_jsonable(args[0], item, f"{path}[{i}]") for i, item in enumerate(data))
        if len(args) != len(data):
            raise SnapshotError(f"{path}: expected {len(args)} items, got {len(data)}")
        return tuple(from_jsonable(a, item, f"{path}[{i}]") for i, (a, item) in enumerate(zip(args, data)))
    if isinstance(cls, type) and hasattr(cls, "__record_fields__"):
        if not isinstance(data, dict):
            raise SnapshotError(f"{path}: expected an object for {cls.__name__}, got {type(data).__name__}")
        hints = field_types(cls)
        kwargs = {}
        for f in fields(cls):
            if f.name in data:
                kwargs[f.name] = from_jsonable(hints[f.name], data[f.name], f"{path}.{f.name}")
            elif f.required:
                raise SnapshotError(f"{path}: missing required key {quoted(f.name)}")
        return cls(**kwargs)
    if cls is bool:
        if not isinstance(data, bool):
            raise SnapshotError(f"{path}: expected true or false, got {quoted(data)}")
        return data
    if cls is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise SnapshotError(f"{path}: expected an integer, got {quoted(data)}")
        if not -INT_LIMIT <= data <= INT_LIMIT:  # no fact a host reports is near 2**64
            raise SnapshotError(f"{path}: the integer {quoted(data)} is out of range (at most {INT_LIMIT})")
        return data
    if cls is float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise SnapshotError(f"{path}: expected a number, got {quoted(data)}")
        if isinstance(data, int) and not -INT_LIMIT <= data <= INT_LIMIT:
            raise SnapshotError(f"{path}: the number {quoted(data)} is out of range")
        if not math.isfinite(data):
            raise SnapshotError(f"{path}: expected a finite number, got {quoted(data)}")
        return float(data)
    if cls is str:
        if not isinstance(data, str):
            raise SnapshotError(f"{path}: expected a string, got {quoted(data)}")
        if has_lone_surrogate(data):
            raise SnapshotError(f"{path}: the string {quoted(data)} is not valid Unicode (a lone surrogate escape)")
        return data
    if cls is typing.Any:
        return data
    raise SnapshotError(f"{path}: cannot read a value of type {_type_name(cls)}")


def refuse_json_constant(name: str) -> Any:
    """json.loads' hook for NaN, Infinity and -Infinity, which JSON itself does not have."""
    raise ValueError(f"{name} is not a JSON number")


def json_value_problem(exc: ValueError) -> str:
    """What json.loads refused, in words (its int/str limit error names no position)."""
    text = str(exc)
    if "is not a JSON number" in text:
        return text
    if "digits" in text:
        return "a number in it is too long (over 4300 digits)"
    return "not valid JSON"


def snapshot_to_dict(facts: HostFacts) -> dict[str, Any]:
    return {"schema": SNAPSHOT_SCHEMA, "kind": SNAPSHOT_KIND, "host": to_jsonable(facts)}


def snapshot_from_dict(data: Any) -> HostFacts:
    if not isinstance(data, dict) or data.get("kind") != SNAPSHOT_KIND:
        raise SnapshotError("not a cudadoctor host snapshot (write one with `cudadoctor probe --output FILE`)")
    schema = data.get("schema")
    if schema != SNAPSHOT_SCHEMA:
        raise SnapshotError(
            f"snapshot schema {quoted(schema)} is not supported (this cudadoctor reads schema {SNAPSHOT_SCHEMA})"
        )
    facts: HostFacts = from_jsonable(HostFacts, data.get("host"), "$.host")
    if facts.driver.nvml_state not in NVML_STATES:
        raise SnapshotError(
            f"$.host.driver.nvml_state: {quoted(facts.driver.nvml_state)} is not one of {', '.join(NVML_STATES)}"
        )
    return facts




def decode_snapshot(text: str, where: str = "snapshot") -> HostFacts:
    """Facts from a snapshot's JSON text; every failure is a SnapshotError naming ``where``."""
    import json  # here: a check that reads no snapshot writes its JSON without json
    try:
        data = json.loads(text, parse_constant=refuse_json_constant)
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise SnapshotError(f"{where}: nested too deeply") from None
    except ValueError as exc:  # an integer over CPython's 4300-digit limit, NaN, Infinity
        raise SnapshotError(f"{where}: {json_value_problem(exc)}") from None
    try:
        return snapshot_from_dict(data)
    except SnapshotError as exc:
        raise SnapshotError(f"{where}: {exc}") from None
