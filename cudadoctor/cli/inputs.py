"""The CLI's side of the input room (app/inputs.py): the same assembly, each problem turned into
the CLI's one-line usage error (exit 2). No click: the fast path (cli/fast.py) uses it too."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Sequence, TypeVar

from ..app import inputs
from .errors import InputError

if TYPE_CHECKING:
    from ..compat.table import CompatTable
    from ..doctor.request import Request, UserValues
    from ..model.facts import HostFacts
    from ..probe.nvml import NvmlProbe

T = TypeVar("T")


def _usage(step: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return step(*args, **kwargs)
    except inputs.InputsError as exc:
        raise InputError(str(exc)) from None


def load_table_or_fail(path: Optional[str], families: Optional[str] = None, config: Optional[str] = None) -> "CompatTable":
    """The table, families and config of --table/--families/--config (app.inputs.assemble_table)."""
    return _usage(inputs.assemble_table, path, families, config)


def user_values_or_fail(
    image: Optional[str], variant: Optional[str], requirements: Sequence[str], min_memory: Optional[str],
    run: Optional[str] = None,
) -> "UserValues":
    return _usage(inputs.user_values, image, variant, requirements, min_memory, run)


def request_or_fail(table: "CompatTable", **values: Any) -> "Request":
    return _usage(inputs.request_for, table, **values)


def today_or_fail() -> Optional[str]:
    """$CUDADOCTOR_TODAY, checked."""
    return _usage(inputs.today)


def gather_facts(
    table: "CompatTable",
    snapshot: Optional[str],
    driver: Optional[str],
    gpus: Sequence[str],
    torch_runtime: bool = False,
    nvml_timeout: Optional[float] = None,
    nvml: Optional["NvmlProbe"] = None,
    forward_compat: Optional[str] = None,
) -> "HostFacts":
    """--snapshot's facts, or this host's; then --driver/--gpu/--forward-compat (validated before probing)."""
    return _usage(inputs.host_facts, table, snapshot or None, driver, gpus, torch_runtime, nvml_timeout, nvml, forward_compat)


def with_topology_or_fail(facts: "HostFacts", path: str) -> "HostFacts":
    """--topology FILE's pair facts over the host's GPUs (app.inputs.with_topology)."""
    return _usage(inputs.with_topology, facts, path)


def start_nvml_probe(
    snapshot: Optional[str], nvml_timeout: float, driver: Optional[str] = None, gpus: Sequence[str] = ()
) -> Optional["NvmlProbe"]:
    """With no --snapshot, NVML's child is started before the table is loaded, unless --driver and
    --gpu replace every NVML fact (app.inputs.start_nvml_probe)."""
    return inputs.start_nvml_probe(snapshot or None, nvml_timeout, driver, gpus)


def emit_json(data: Any) -> None:
    """One JSON document on stdout (ASCII: json escapes the rest), flushed, as click.echo wrote it."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


_FLUSH_AT = 1 << 16  # characters gathered before a write
_quoted: Callable[[str], str] = json.encoder.encode_basestring_ascii


def _scalar(value: Any) -> Optional[str]:
    """A JSON scalar's text as json writes it (None for anything else), without a json.dumps call
    per value: a fleet's report holds hundreds of thousands of them."""
    kind = type(value)
    if kind is str:
        return _quoted(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and value == value and value not in (_INF, -_INF):
        return float.__repr__(value)
    return None


_INF = float("inf")


def _indented(value: Any, indent: str) -> str:
    """``value`` as json.dumps(indent=2) writes it at a line indented by ``indent``. The same text,
    made faster: json's indenting encoder is pure Python, piece by piece, while a fleet's report is
    mostly long lists of host names, and each such list is quoted by json's own C string encoder
    and joined in one go."""
    text = _scalar(value)
    if text is not None:
        return text
    kind = type(value)
    if kind is list or kind is tuple:
        if not value:
            return "[]"
        inner = indent + "  "
        glue = ",\n" + inner
        try:  # a list of names, most of a fleet's report: quoted in one go by json's C string encoder
            joined = glue.join(map(_quoted, value))
        except TypeError:  # an item that is not a string
            joined = glue.join(_indented(v, inner) for v in value)
        return "[\n" + inner + joined + "\n" + indent + "]"
    if kind is dict and all(type(k) is str for k in value):
        if not value:
            return "{}"
        inner = indent + "  "
        members = (_quoted(k) + ": " + _indented(v, inner) for k, v in value.items())
        return "{\n" + inner + (",\n" + inner).join(members) + "\n" + indent + "}"
    if isinstance(value, (bool, int, float)):
        # A subclass or a non-finite float: json's shared encoder (C). An indenting one is built per
        # call, as a cycle of closures that only the cyclic collector frees, and the CLI runs with
        # that collector off.
        return json.dumps(value)
    # Anything else (a subclass of list or dict, a map with keys json converts): as json writes it.
    # JSON text holds no raw newline but those indent=2 puts between items, so each line gets the
    # depth's indent.
    return json.dumps(value, indent=2).replace("\n", "\n" + indent)


def json_members_text(members: Iterable[tuple[str, Any]]) -> Iterator[str]:
    """The text of one JSON object of these members, as ``json.dumps(dict(members), indent=2)``
    writes it, in pieces: a member whose value is an iterator is a list built entry by entry, so
    neither the whole document nor its text is ever held (a fleet of a million nodes)."""
    opened = False
    for key, value in members:
        yield ("{\n  " if not opened else ",\n  ") + json.dumps(key) + ": "
        opened = True
        if not isinstance(value, Iterator):
            yield _indented(value, "  ")
            continue
        first = True
        for item in value:
            yield ("[\n    " if first else ",\n    ") + _indented(item, "    ")
            first = False
        yield "[]" if first else "\n  ]"
    yield "\n}" if opened else "{}"


def emit_json_members(members: Iterable[tuple[str, Any]]) -> None:
    """emit_json of the object of these members, written as it is made (json_members_text)."""
    pending: list[str] = []
    size = 0
    for piece in json_members_text(members):
        pending.append(piece)
        size += len(piece)
        if size >= _FLUSH_AT:
            sys.stdout.write("".join(pending))
            pending, size = [], 0
    pending.append("\n")
    sys.stdout.write("".join(pending))
    sys.stdout.flush()
