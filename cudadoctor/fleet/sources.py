"""What a fleet source holds, told apart by its content: a cudadoctor host snapshot, a Kubernetes
``List`` of ``Node`` objects (``kubectl get nodes -o json``) or a single ``Node``. Pure: parsed
JSON in, fleet hosts out; reading files is the loader's job.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from functools import lru_cache
from types import ModuleType
from typing import Any, BinaryIO, Iterator, NoReturn, Optional, Union

from ..model.facts import GpuFacts, HostFacts
from ..model.record import field_values, maker, record, replace
from ..model.snapshot import SNAPSHOT_KIND, SNAPSHOT_SCHEMA, SnapshotError, json_value_problem, snapshot_from_dict
from ..model.text import has_lone_surrogate, quoted
from .gfd import PLATFORM_LABELS, LabelError, facts_from_labels
from .gfd import PREFIX as GFD_PREFIX

GFD_TIMESTAMP = "nvidia.com/gfd.timestamp"  # when GFD last ran: no fact about the node

SNAPSHOT, NODE_LABELS = "snapshot", "node-labels"


class SourceError(ValueError):
    """A source (or one node in it) that cannot be read; the message names it and what is wrong."""


@record
class FleetHost:
    """One node of the fleet: its name, where it was read, and its facts (None: no GPU labels, so
    nothing to judge: the fleet counts it as unknown)."""

    name: str
    source: str  # the file (or "-" / "kubernetes") it was read from
    origin: str  # SNAPSHOT or NODE_LABELS
    facts: Optional[HostFacts]
    # The facts with what names this host taken out (identity_free), shared by every host of its
    # kind so the fleet groups hosts without comparing each one; None: not worked out yet.
    kind: Optional[HostFacts] = None


def identity_free(facts: HostFacts) -> HostFacts:
    """The facts without what cannot change a verdict: names, times, NVSwitch cluster UUIDs and,
    unless CUDA_VISIBLE_DEVICES could name a GPU by them, the GPUs' UUIDs and PCI addresses."""
    gpus = facts.gpus
    env = facts.system.env("CUDA_VISIBLE_DEVICES") if facts.system is not None else None
    if env is None:
        gpus = tuple(replace(g, uuid=None, pci_bus_id=None) if (g.uuid or g.pci_bus_id) else g for g in gpus)
    # An NVSwitch fabric's cluster UUID names the machine's NVLink domain; no check judges it.
    gpus = tuple(
        replace(g, fabric=replace(g.fabric, cluster_uuid=None)) if g.fabric is not None and g.fabric.cluster_uuid else g
        for g in gpus
    )
    return replace(facts, hostname=None, probed_at=None, cudadoctor_version=None, gpus=gpus)


@record
class SourceProblem:
    """One entry of a collection that could not be read (the rest of it still counts)."""

    source: str
    error: str


Item = Union[FleetHost, SourceProblem]


def kind_of(data: Any) -> str:
    """``snapshot``, ``node-list`` or ``node``; SourceError for anything else."""
    if isinstance(data, dict):
        if data.get("kind") == SNAPSHOT_KIND:
            return "snapshot"
        if data.get("kind") in ("List", "NodeList") and isinstance(data.get("items"), list):
            return "node-list"
        if data.get("kind") == "Node":
            return "node"
        if "kind" in data:
            return f"kind {str(data.get('kind'))[:40]!r}"
    return "unknown"


def _gpu_labels(node: dict[str, Any], where: str) -> tuple[str, dict[str, str]]:
    """The node's name and labels, checked: a name, and a map of strings."""
    metadata = node.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise SourceError(f"{where}: a Node without metadata.name")
    name = metadata["name"]
    labels = metadata.get("labels") or {}
    if not isinstance(labels, dict):
        raise SourceError(f"{where}: node {name[:80]}: metadata.labels is not a map of strings")
    # Every node of a list passes here: the types are checked in bulk (map and set run in C).
    if not set(map(type, labels)) <= _STR or not set(map(type, labels.values())) <= _STR:
        raise SourceError(f"{where}: node {name[:80]}: metadata.labels is not a map of strings")
    return name, labels


_STR = {str}
_GFD_AFTER_NAME = GFD_PREFIX[:-1] + chr(ord(GFD_PREFIX[-1]) + 1)  # sorts after every name with GFD's prefix


def _node_platform(node: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
    """(operatingSystem, architecture) of the Node's status.nodeInfo, where they are strings."""
    status = node.get("status")
    return _info_platform(status.get("nodeInfo") if isinstance(status, dict) else None)


def _info_platform(info: Any) -> tuple[Optional[str], Optional[str]]:
    if not isinstance(info, dict):
        return None, None
    os_name, arch = info.get("operatingSystem"), info.get("architecture")
    return (os_name if isinstance(os_name, str) else None), (arch if isinstance(arch, str) else None)


@lru_cache(maxsize=4096)
def _facts_of(names: tuple[str, ...], values: tuple[str, ...], node_os: Optional[str], node_arch: Optional[str]) -> Optional[HostFacts]:
    """One facts object per distinct label set: 10 000 nodes of 40 kinds build 40 (records are frozen)."""
    return facts_from_labels(dict(zip(names, values)), node_os=node_os, node_arch=node_arch)


def _labelled_host(name: str, labels: dict[str, str], platform: tuple[Optional[str], Optional[str]], where: str) -> FleetHost:
    """A node's host from its checked name and labels: its nvidia.com/ and platform labels (GFD's
    timestamp left out) with its nodeInfo platform are all that decides its facts, so identical
    nodes share one key."""
    # Sorted, GFD's label names are one run (found by bisection): a node carries dozens of others.
    # The key is the names and their values, two tuples made in C (not a pair per label): equal
    # label sets give equal keys, the platform's names always coming after GFD's in one order.
    names = sorted(labels)
    chosen = names[bisect_left(names, GFD_PREFIX) : bisect_left(names, _GFD_AFTER_NAME)]
    if GFD_TIMESTAMP in labels:  # in GFD's run
        chosen.remove(GFD_TIMESTAMP)
    chosen += [key for key in PLATFORM_LABELS if key in labels]
    try:
        facts = _facts_of(tuple(chosen), tuple(map(labels.__getitem__, chosen)), *platform)
    except LabelError as exc:
        raise SourceError(f"{where}: node {quoted(name, 80)}: {exc}") from None
    return FleetHost(name=name, source=where, origin=NODE_LABELS, facts=facts, kind=facts)  # labels name no host


def node_host(node: Any, where: str) -> FleetHost:
    if not isinstance(node, dict) or node.get("kind", "Node") != "Node":
        raise SourceError(f"{where}: an item that is not a Node")
    name, labels = _gpu_labels(node, where)
    return _labelled_host(name, labels, _node_platform(node), where)


_IDENTITY = ("hostname", "probed_at", "cudadoctor_version")  # HostFacts fields that name one host


_TEXT = {str, type(None)}


def _all_text(values: list[Any], strict: bool) -> bool:
    """Whether every value is a string or null, as the codec reads an optional text (checked in
    C); a strict document's strings are valid Unicode already."""
    return set(map(type, values)) <= _TEXT and (strict or not any(map(has_lone_surrogate, filter(None, values))))


class _Known:
    """A decoded snapshot kind: its facts, their kind, and the fields of its GPUs and of the host
    (each copied per host with that host's identities put in)."""

    __slots__ = ("kind", "gpu_fields", "host_fields", "own_kind")

    def __init__(self, facts: HostFacts, kind: HostFacts) -> None:
        self.kind = kind
        self.gpu_fields = tuple(field_values(gpu) for gpu in facts.gpus)
        self.host_fields = field_values(facts)
        # Equal keys mean equal environments; where CUDA_VISIBLE_DEVICES can name GPUs by their
        # identities, those stay in the kind, so each host's is its own.
        self.own_kind = facts.system is not None and facts.system.env("CUDA_VISIBLE_DEVICES") is not None


class SnapshotCache:
    """Decodes snapshots, once per distinct content: a fleet's snapshots differ mostly in the
    host's name, probe time and GPU identities, so a snapshot equal to one already decoded in
    everything else reuses its facts with its own names and identities put in (each a string or
    null, else the codec decodes it and words what is wrong). The facts are exactly what
    ``snapshot_from_dict`` returns."""

    def __init__(self) -> None:
        import json

        import msgspec

        # key -> its kind. A key is str (json's encoding) or bytes (msgspec's): never equal.
        self._known: dict[Union[str, bytes], _Known] = {}
        # One encoder for every key: json.dumps with separators builds a new one per call. A decoded
        # document holds no cycle, so the check for one is skipped. msgspec's, about seven times
        # faster, writes NaN and infinities as null: only for a document msgspec decoded (strict),
        # which holds none, since two snapshots that differ so must not share facts.
        self._encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
        self._encode_strict = msgspec.json.encode
        self._make_gpu = maker(GpuFacts)
        self._make_host = maker(HostFacts)

    def _split(self, host: dict[str, Any], strict: bool) -> Optional[tuple[Union[str, bytes], list[Any], list[Any], list[Any]]]:
        """The host's key (its JSON without its names and GPU identities), its names, and its GPUs'
        UUIDs and PCI addresses (what names one GPU); None where a GPU is not an object (the codec
        says what is wrong)."""
        rest = host.copy()
        names = [rest.pop(name, None) for name in _IDENTITY]
        uuids: list[Any] = []
        buses: list[Any] = []
        gpus = rest.get("gpus")
        if isinstance(gpus, list):
            if not all(isinstance(g, dict) for g in gpus):
                return None
            rest["gpus"] = stripped = [g.copy() for g in gpus]
            uuids = [gpu.pop("uuid", None) for gpu in stripped]
            buses = [gpu.pop("pci_bus_id", None) for gpu in stripped]
        return (self._encode_strict(rest) if strict else self._encode(rest)), names, uuids, buses

    def decode(self, data: Any, *, _decoded_by_msgspec: bool = False) -> tuple[HostFacts, HostFacts]:
        """(the snapshot's facts, the same without identities: shared by its kind).
        ``_decoded_by_msgspec`` (this module's own, never a caller's: a json-decoded document may
        hold NaN) says the document holds no NaN, infinity or lone surrogate."""
        strict = _decoded_by_msgspec
        host = data.get("host") if isinstance(data, dict) else None
        if not isinstance(host, dict) or data.get("kind") != SNAPSHOT_KIND or data.get("schema") != SNAPSHOT_SCHEMA:
            facts = snapshot_from_dict(data)  # raises: its message says what is wrong
            return facts, identity_free(facts)
        split = self._split(host, strict)
        known = self._known.get(split[0]) if split is not None else None
        if known is not None and split is not None:
            _, names, uuids, buses = split
            if _all_text(names, strict) and _all_text(uuids, strict) and _all_text(buses, strict):
                return self._with_identities(known, names, uuids, buses)
        facts = snapshot_from_dict(data)  # also where a name or identity is not text: it says so
        kind = identity_free(facts)
        if split is not None and known is None:
            self._known[split[0]] = _Known(facts, kind)
        return facts, kind

    def _with_identities(
        self, known: _Known, names: list[Any], uuids: list[Any], buses: list[Any]
    ) -> tuple[HostFacts, HostFacts]:
        make_gpu = self._make_gpu
        gpus = []
        for fields_of, uuid, pci_bus_id in zip(known.gpu_fields, uuids, buses):
            values = fields_of.copy()
            values["uuid"], values["pci_bus_id"] = uuid, pci_bus_id
            gpus.append(make_gpu(values))
        values = known.host_fields.copy()
        values["gpus"] = tuple(gpus)
        values.update(zip(_IDENTITY, names))
        facts = self._make_host(values)
        return facts, (identity_free(facts) if known.own_kind else known.kind)


def snapshot_host(
    data: Any, where: str, fallback_name: str, cache: Optional[SnapshotCache] = None, *, _decoded_by_msgspec: bool = False
) -> FleetHost:
    try:
        facts, kind = (cache or SnapshotCache()).decode(data, _decoded_by_msgspec=_decoded_by_msgspec)
    except SnapshotError as exc:
        raise SourceError(f"{where}: {exc}") from None
    except RecursionError:  # a value nested deeper than the codec (or the cache's key) reads
        raise SourceError(f"{where}: nested too deeply") from None
    return FleetHost(facts.hostname or fallback_name, where, SNAPSHOT, facts, kind)


def hosts_in(
    data: Any, where: str, fallback_name: str, cache: Optional[SnapshotCache] = None, *, _decoded_by_msgspec: bool = False
) -> Iterator[Item]:
    """The hosts of one parsed document (``_decoded_by_msgspec``, this module's own: see SnapshotCache.decode).
    A bad node inside a list is one SourceProblem (the others still count); a document that is
    none of the known kinds raises SourceError."""
    kind = kind_of(data)
    if kind == "snapshot":
        yield snapshot_host(data, where, fallback_name, cache, _decoded_by_msgspec=_decoded_by_msgspec)
    elif kind == "node":
        yield node_host(data, where)
    elif kind == "node-list":
        for i, item in enumerate(data["items"]):
            try:
                yield node_host(item, f"{where} (item {i})" if not _named(item) else where)
            except SourceError as exc:
                yield SourceProblem(where, str(exc))
    else:
        found = f" ({kind})" if kind != "unknown" else ""
        raise SourceError(
            f"{where}: neither a cudadoctor host snapshot nor a Kubernetes Node or node list{found}: "
            "give `cudadoctor probe --json` output or `kubectl get nodes -o json`"
        )


def _named(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("metadata"), dict) and bool(item["metadata"].get("name"))


def decode_source(text: str, where: str) -> Any:
    """A source's JSON; SourceError naming ``where`` when it is not JSON."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"{where}: not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise SourceError(f"{where}: nested too deeply") from None
    except ValueError as exc:  # an integer over CPython's 4300-digit limit
        raise SourceError(f"{where}: {json_value_problem(exc)}") from None


# --- reading a document as it streams in -----------------------------------------------------

MAX_VALUE_CHARS = 64 * 1024 * 1024  # one node of a list, or a whole document of another kind, at most this
_CHUNK_BYTES = 4 * 1024 * 1024
_RAW_ITEMS_KEPT = 64  # a document's items kept as parsed until its kind says it is a node list
_BLANKS = re.compile(r"[ \t\n\r]*")  # JSON's white space


class _Chunks:
    """Bytes handed out a chunk at a time, as a file's stream hands them."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._at = 0

    def read1(self, size: int) -> bytes:
        chunk = bytes(self._data[self._at : self._at + size])
        self._at += len(chunk)
        return chunk

    read = read1


class _Window:
    """A JSON document's text, read from a byte stream a chunk at a time: the unread part of it,
    with where it starts in the document (for error messages)."""

    def __init__(self, source: Union[bytes, bytearray, memoryview, BinaryIO, _Chunks], where: str) -> None:
        import codecs
        import json

        self._decoder = json.JSONDecoder()
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self.where = where
        if isinstance(source, (bytes, bytearray, memoryview)):
            self._stream: Union[BinaryIO, _Chunks, None] = None
            self._text = self._decode(bytes(source), final=True)
            self.eof = True
        else:
            self._stream = source
            self._text = ""
            self.eof = False
        self.pos = 0
        self._line, self._column = 1, 1  # where _text[0] stands in the document

    def _decode(self, data: bytes, final: bool) -> str:
        try:
            return self._utf8.decode(data, final)
        except UnicodeDecodeError:
            raise SourceError(f"{self.where}: not UTF-8 text") from None

    def more(self) -> bool:
        """Read the next chunk (dropping what was read); False at the end of the stream."""
        if self.eof or self._stream is None:
            return False
        try:
            # read1: what the stream has (up to a chunk), so that a pipe held open is not waited on
            # for a whole chunk when what came already decides (too large, or malformed)
            read = getattr(self._stream, "read1", None) or self._stream.read
            data = read(_CHUNK_BYTES)
        except OSError as exc:
            raise SourceError(f"{self.where}: cannot be read ({exc.strerror or exc})") from None
        done = self._text[: self.pos]
        newlines = done.count("\n")
        self._line += newlines
        self._column = len(done) - done.rfind("\n") if newlines else self._column + len(done)
        self._text = self._text[self.pos :] + self._decode(data or b"", final=not data)
        self.pos = 0
        if not data:
            self.eof = True
        return bool(data) or bool(self._text)

    def peek(self) -> str:
        """The next character that is not white space ("" at the end), the position put on it;
        white space runs of more than MAX_VALUE_CHARS (an endless stream of blanks) are refused."""
        skipped = 0
        while True:
            text, start = self._text, self.pos
            pos = _BLANKS.match(text, start).end()  # type: ignore[union-attr]
            skipped += pos - start
            self.pos = pos
            if pos < len(text):
                return text[pos]
            if skipped >= MAX_VALUE_CHARS:
                self.too_large()
            if not self.more():
                return ""

    def too_large(self) -> NoReturn:
        raise SourceError(f"{self.where}: too large (white space or one value of more than {MAX_VALUE_CHARS} characters)")

    def small(self) -> bool:
        """Whether the whole document fits in one chunk (read to its end to know): then it is
        parsed in one go, as a snapshot or a small list is."""
        while not self.eof and len(self._text) - self.pos <= _CHUNK_BYTES:
            self.more()
        return self.eof

    def take(self, char: str) -> None:
        if self.peek() != char:
            self.invalid()
        self.pos += 1

    def invalid(self, line: Optional[int] = None, column: Optional[int] = None) -> NoReturn:
        if line is None or column is None:
            before = self._text[: self.pos]
            line, column = before.count("\n") + 1, self.pos - before.rfind("\n")
        if line == 1:
            column += self._column - 1
        raise SourceError(f"{self.where}: not valid JSON (line {line + self._line - 1}, column {column})")

    def value(self) -> Any:
        """The JSON value at the position (read further while it runs past the window), at most
        MAX_VALUE_CHARS long."""
        import json

        self.peek()
        while True:
            try:
                found, end = self._decoder.raw_decode(self._text, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof or len(self._text) - self.pos > MAX_VALUE_CHARS:
                    if not self.eof:
                        self.too_large()
                    self.invalid(exc.lineno, exc.colno)
                # Read on until the window holds twice what it did: a value that spans many
                # small reads (a pipe's) is parsed again a few times, not once per read.
                want = min(2 * (len(self._text) - self.pos) + 1, MAX_VALUE_CHARS + 1)
                while len(self._text) - self.pos < want and self.more():
                    pass
                continue
            except RecursionError:
                raise SourceError(f"{self.where}: nested too deeply") from None
            except ValueError:  # an integer of thousands of digits: Python refuses to convert it
                raise SourceError(f"{self.where}: a number too long to read (an integer of thousands of digits)") from None
            if end == len(self._text) and not self.eof:  # a number may go on in the next chunk
                if self.more():
                    continue
            if end - self.pos > MAX_VALUE_CHARS:
                self.too_large()
            self.pos = end
            return found


# A fleet source file up to this size is read whole (a larger one streams): the old one-document
# cap, so reading whole costs at most what a document always could; past it memory is the nodes' facts.
WHOLE_LIST_BYTES = 64 * 1024 * 1024


_DIGITS = b"0123456789"


def _long_digit_run(data: bytes) -> bool:
    """Whether ``data`` holds a run of more digits than Python converts to an integer (its
    int_max_str_digits). Such a run covers one of every that-many-th bytes, so only around those
    is it looked for: a few thousand slices of a 30 MB list, in C."""
    longest = sys.get_int_max_str_digits()
    if not longest:
        return False
    for index, byte in enumerate(data[::longest]):
        if 48 <= byte <= 57:  # an ASCII digit: how far does its run go either way?
            at = index * longest
            before, after = data[max(0, at - longest) : at], data[at : at + longest + 1]
            if len(before) - len(before.rstrip(_DIGITS)) + len(after) - len(after.lstrip(_DIGITS)) > longest:
                return True
    return False


def _msgspec_reads_as_json(data: bytes) -> bool:
    """Whether msgspec reads ``data`` as json would, where it reads it at all: not when it holds a
    run of digits json may refuse as an integer (msgspec skips what it does not keep), nor when it
    is not UTF-8 throughout (msgspec does not check the strings it skips)."""
    if _long_digit_run(data):
        return False
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
    return True


def _whole_list_hosts(data: bytes, where: str) -> Optional[list[FleetHost]]:
    """The hosts of a node list read whole by msgspec (about four times json's speed, reading only
    what a host is made of); None for anything else, and for a list with any node that is not
    plainly a named Node with a map of string labels, or one msgspec may read otherwise than json
    (above): the streaming decoder then reads it and says what is wrong in its words."""
    if b'"items"' not in data or not _msgspec_reads_as_json(data):  # a snapshot or a single Node: not worth a try
        return None
    fields = _node_fields()
    try:
        listed = fields.decode_node_list(data)
        if listed.kind not in ("List", "NodeList") or listed.items is None:
            return None
        hosts = []
        for node in listed.items:
            metadata = node.metadata
            if node.kind != "Node" or metadata is None or not metadata.name:
                return None
            platform = _info_platform(node.status.nodeInfo) if node.status is not None else (None, None)
            hosts.append(_labelled_host(metadata.name, fields.decode_labels(metadata.labels), platform, where))
    except (fields.Malformed, SourceError, RecursionError):  # RecursionError: nested deeper than msgspec reads
        return None
    return hosts


_UNSURE = object()


@lru_cache(maxsize=None)
def _node_fields() -> ModuleType:
    """fleet/node_fields.py, imported once it is needed (it imports msgspec, which only reading
    a source needs), then found in one call: a fleet reads thousands of snapshots."""
    from . import node_fields

    return node_fields


def _small_document(data: bytes) -> Any:
    """A document of at most one window (a snapshot, most often) parsed by msgspec, at about twice
    json's speed: the same values wherever msgspec reads it; ``_UNSURE`` where it refuses it (not
    JSON, NaN, an infinite number, a lone surrogate, nested too deeply) or may read it otherwise
    than json (above), and the window's decoder then reads it and says what is wrong."""
    if len(data) > _CHUNK_BYTES or not _msgspec_reads_as_json(data):
        return _UNSURE
    fields = _node_fields()
    try:
        return fields.decode_value(data)
    except (fields.Malformed, RecursionError):
        return _UNSURE


def _listed_node(item: Any, where: str, index: int) -> Item:
    try:
        return node_host(item, f"{where} (item {index})" if not _named(item) else where)
    except SourceError as exc:
        return SourceProblem(where, str(exc))


def decode_hosts(
    source: Union[bytes, bytearray, memoryview, BinaryIO], where: str, fallback_name: str, cache: Optional[SnapshotCache] = None,
) -> Iterator[Item]:
    """The hosts of one JSON document, read as its bytes come: a host snapshot, a Node, or a node
    list (``kubectl get nodes -o json``, or one page of the API's list), from its bytes or from a
    binary stream the caller opened. A node list is never held whole: each item is parsed on its
    own (at most MAX_VALUE_CHARS) and kept only as its host, so a 1 GiB list costs the memory of
    its nodes' facts. The same hosts, problems and errors as ``hosts_in`` over the parsed
    document; anything that is not JSON is one SourceError naming ``where``. A node list given as
    bytes (the CLI reads a file of at most WHOLE_LIST_BYTES whole) is first decoded whole, field by
    field (``_whole_list_hosts``): the same hosts, faster."""
    if isinstance(source, (bytearray, memoryview)):
        source = bytes(source)
    if isinstance(source, bytes):
        data = source
        hosts = _whole_list_hosts(data, where)
        if hosts is not None:
            yield from hosts
            return
        parsed = _small_document(data)
        if parsed is not _UNSURE:
            yield from hosts_in(parsed, where, fallback_name, cache, _decoded_by_msgspec=True)
            return
    # More than one window given whole is streamed as a file is, node by node: its words, its memory.
    window = _Window(_Chunks(source) if isinstance(source, bytes) and len(source) > _CHUNK_BYTES else source, where)
    if window.small() or window.peek() != "{":
        data = window.value()
        if window.peek() != "":
            window.invalid()
        yield from hosts_in(data, where, fallback_name, cache)
        return
    window.take("{")
    top: dict[str, Any] = {}
    streamed: Optional[list[Item]] = None
    raw: Optional[list[Any]] = None
    if window.peek() != "}":
        while True:
            if window.peek() != '"':
                window.invalid()
            key = window.value()
            window.take(":")
            if key == "items" and window.peek() == "[":
                window.take("[")
                streamed, raw = [], []
                if window.peek() != "]":
                    while True:
                        item = window.value()
                        streamed.append(_listed_node(item, where, len(streamed)))
                        if raw is not None:
                            raw.append(item)
                            if len(raw) > _RAW_ITEMS_KEPT:
                                raw = None  # too many to keep: only a node list is read past this
                        if window.peek() != ",":
                            break
                        window.take(",")
                window.take("]")
                top.pop("items", None)
            else:
                top[key] = window.value()
                if key == "items":
                    streamed = raw = None
            if window.peek() != ",":
                break
            window.take(",")
    window.take("}")
    if window.peek() != "":
        window.invalid()
    if streamed is not None and top.get("kind") in ("List", "NodeList"):
        yield from streamed
        return
    if streamed is not None:
        if raw is None:
            raise SourceError(f"{where}: an items array of more than {_RAW_ITEMS_KEPT} entries in a document that is not a node list")
        top["items"] = raw
    yield from hosts_in(top, where, fallback_name, cache)
