"""The CLI's side of the input room (app/inputs.py): the same assembly, each problem turned into
the CLI's one-line usage error (exit 2). No click: the fast path (cli/fast.py) uses it too."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

from ..app import inputs
from .errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar

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
    from ..report.json_text import dumps_indented

    sys.stdout.write(dumps_indented(data) + "\n")
    sys.stdout.flush()


_FLUSH_AT = 1 << 16  # characters gathered before a write
_NOT_ASCII = re.compile("[^\x00-\x7e]")  # as a negated class: compiled in microseconds, not ms


def _ascii_escape(match: "re.Match[str]") -> str:
    """A character json's ensure_ascii writes as an escape: \\uXXXX, a surrogate pair above the BMP."""
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def _indented(value: Any, indent: str) -> str:
    """``value`` as json.dumps(indent=2) writes it at a line indented by ``indent``: encoded and
    laid out by msgspec, in C (json's indenting encoder is pure Python, piece by piece, and a
    fleet's report is tens of MB), then made ASCII as json makes it. msgspec writes a finite float
    in its shortest form as json does, but its exponent without "+" or leading zeros, and NaN and
    infinities as null; no document written this way holds a float (the fleet schema has none)."""
    import msgspec

    try:
        text = msgspec.json.format(msgspec.json.encode(value), indent=2).decode()
    except (TypeError, OverflowError, ValueError):  # what msgspec cannot write (a key of another type): json can
        from ..report.json_text import dumps_indented

        text = dumps_indented(value)
    else:
        if not text.isascii() or "\x7f" in text:  # only inside strings: msgspec escapes nothing else
            text = _NOT_ASCII.sub(_ascii_escape, text)
    # JSON text holds no raw newline but those between items, so each line gets the depth's indent.
    return text.replace("\n", "\n" + indent) if indent else text


def json_members_text(members: Iterable[tuple[str, Any]]) -> Iterator[str]:
    """The text of one JSON object of these members, as ``json.dumps(dict(members), indent=2)``
    writes it, in pieces: a member whose value is an iterator is a list built entry by entry, so
    neither the whole document nor its text is ever held (a fleet of a million nodes)."""
    from ..report.json_text import quoted

    opened = False
    for key, value in members:
        yield ("{\n  " if not opened else ",\n  ") + quoted(key) + ": "
        opened = True
        if not isinstance(value, Iterator):
            yield _indented(value, "  ")
            continue
        first = True
        for item in value:
            yield ("[\n    " if first else ",\n    ") + _entry(item)
            first = False
        yield "[]" if first else "\n  ]"
    yield "\n}" if opened else "{}"


def _entry(item: Any) -> str:
    """An entry of a member's list as it stands in the document: laid out by msgspec at its own
    depth, as the one entry of an object's one member, whose frame is then cut off
    ('{\\n  "": [\\n    ' and '\\n  ]\\n}'). Indenting each line of a 35 MB report afterwards
    cost about a fifth of writing it. One entry at a time: a fleet's candidates are 100 KB each."""
    return _indented({"": [item]}, "")[14:-6]


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
