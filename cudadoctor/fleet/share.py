"""One check for hosts whose drivers differ only between two of the table's driver versions.

A real cluster's nodes differ by driver patch (550.127.05 here, 550.144.03 there) far more than
by anything a check decides on. Every driver decision the check makes compares the host's driver
with a driver version the table records (Table 3's minimums, the minor-version floors, the
forward-compatibility branches, the last branch of an architecture, an NGC month's driver) or
reads its branch. So two drivers of one branch that sit between the same two table versions get
the same verdicts, the same build and the same fixes; only the words that quote the host's own
driver differ. ``SharedChecks`` judges the first host of such a class and gives the others that
result with their own facts, and their own driver quoted wherever it quoted its own.

What may not be shared is not: a request that brings driver constraints from outside the table
(--require, an image's NVIDIA_REQUIRE_* labels, a `docker run` line) shares nothing; a driver that
is itself one of the table's versions, or one the table's words quote, is judged on its own (the
words could quote either); so is a host whose facts carry another driver version (a kernel
module's, libcuda's, NVML's, a versioned library's name: the check compares the driver with those
too), a host whose GPUs differ in memory (the verdict key ranks the sizes, the words quote them),
and a class whose result holds the driver other than as text (CannotSwap). tests/test_fleet_sharing.py holds
a shared fleet's report to the one every host's own check gives.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Any, Callable, Iterator, Optional, Union

from ..compat.table import CompatTable
from ..doctor.answer import Answer
from ..doctor.check import CheckResult
from ..doctor.request import Request
from ..model.facts import HostFacts
from ..model.record import fields, is_record, replace
from ..model.versions import DriverVersion, VersionError

_WIDTH = 4  # driver versions compare component by component, missing ones as 0 (model/versions.py)


def _padded(version: DriverVersion) -> tuple[int, ...]:
    numbers = version.numbers
    return numbers + (0,) * (_WIDTH - len(numbers)) if len(numbers) < _WIDTH else numbers


_QUOTED_DRIVER = re.compile(r"(?<![\d.])\d{3}\.\d{1,3}(?:\.\d{1,3})?(?![\d]|\.\d)")  # 570.86.10 in a note


def _leaves(value: Any, skip: tuple[str, ...] = (), seen: Optional[set[int]] = None) -> Iterator[Any]:
    """Every value inside ``value`` that is not a record or a container (a driver version counts as
    a value), with the keys of its maps; a record met twice is walked once, and record fields
    named in ``skip`` are left out."""
    seen = set() if seen is None else seen
    if isinstance(value, DriverVersion) or not (is_record(value) or isinstance(value, (tuple, list, frozenset, set, dict))):
        yield value
    elif is_record(value):
        if id(value) not in seen:
            seen.add(id(value))
            for f in fields(value):
                if f.name not in skip:
                    yield from _leaves(getattr(value, f.name), skip, seen)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(key, skip, seen)
            yield from _leaves(item, skip, seen)
    else:
        for item in value:
            yield from _leaves(item, skip, seen)


def table_drivers(table: CompatTable) -> tuple[tuple[int, ...], ...]:
    """The table's driver versions, sorted, each padded to one width (worked out once per table)."""
    memo = table.memo("fleet.share")
    drivers = memo.get("drivers")
    if drivers is None:
        # Every driver version the table's records hold (its raw JSON excepted), and every one its
        # words quote (a note citing the driver a matrix prints): a host on such a driver is judged
        # alone, so a swap never rewrites NVIDIA's words as if they quoted the host.
        found: set[tuple[int, ...]] = set()
        for leaf in _leaves(table, skip=("raw", "gpu_names")):
            if isinstance(leaf, DriverVersion):
                found.add(_padded(leaf))
            elif type(leaf) is str and "." in leaf:
                found.update(_padded(DriverVersion.parse(text)) for text in _QUOTED_DRIVER.findall(leaf))
        drivers = memo["drivers"] = tuple(sorted(found))
    return drivers


def driver_class(raw: str, drivers: tuple[tuple[int, ...], ...]) -> Optional[tuple[int, ...]]:
    """Where a driver sits among the table's versions: its branch, how many components it has, and
    how many table versions lie below it. None when it cannot be shared: unreadable, or equal to
    one of the table's versions."""
    try:
        version = DriverVersion.parse(raw)
    except VersionError:
        return None
    if len(version.numbers) > _WIDTH:
        return None
    padded = _padded(version)
    at = bisect_left(drivers, padded)
    if at < len(drivers) and drivers[at] == padded:
        return None
    return (version.branch, len(version.numbers), at)


_DRIVER_LIKE = re.compile(r"\d{3,}\.\d")  # a driver branch and its minor: 550.54, libcuda.so.550.54.15


def quotes_no_driver(value: Any) -> bool:
    """The value (a host's facts, their driver's version taken out, or one of their fields) holds
    no other driver version: no kernel module's, libcuda's or NVML library's version, no versioned
    library name. A check compares the driver with those too (a module that does not match its
    library), so a host that carries one has a threshold of its own and is judged alone."""
    return not any(type(leaf) is str and _DRIVER_LIKE.search(leaf) for leaf in _leaves(value))


def _shareable(request: Request) -> bool:
    """Requests whose driver decisions are the table's alone."""
    return not request.requirements and request.image is None and request.run is None


def _whole_at(text: str, at: int, end: int) -> bool:
    """The version at text[at:end] stands alone: not after a digit or a dot, and not continued by
    one (550.54 inside 550.54.15)."""
    before = text[at - 1] if at else ""
    after = text[end:end + 2]
    return not (before.isdigit() or before == ".") and not (after[:1].isdigit() or (after[:1] == "." and after[1:2].isdigit()))


def quoted_apart(text: str, raw: str) -> Optional[tuple[str, ...]]:
    """``text`` split where it quotes the driver ``raw`` as a whole version (joining the pieces
    with another driver's text quotes that one instead); None when it does not quote it."""
    pieces = []
    start = at = 0
    while (at := text.find(raw, at)) >= 0:
        end = at + len(raw)
        if _whole_at(text, at, end):
            pieces.append(text[start:at])
            start = end
        at = end
    if not pieces:
        return None
    pieces.append(text[start:])
    return tuple(pieces)


class CannotSwap(Exception):
    """A result this module cannot rewrite for another host: its class is checked host by host."""


Swap = Callable[[str, HostFacts], Any]  # (a host's driver text, its facts) -> the value rewritten for it


class _Swapper:
    """Rewrites a judged result for another host of its class: the representative's facts become
    the host's, and every text that quotes the representative's driver quotes the host's. The
    rewrite is planned once, over the representative's result: only the values on a path to a
    quote are rebuilt for each host, the rest is shared as it is."""

    def __init__(self, raw: str, facts: HostFacts, inert: Optional[dict[int, tuple[object, str]]] = None):
        self.raw = raw
        self.facts = facts
        self.inert = inert if inert is not None else {}  # SharedChecks.hold_inert's records

    def plan(self, value: Any) -> Optional[Swap]:
        """How to rewrite ``value`` for a host; None when it quotes neither the facts nor the driver."""
        kind = type(value)
        if kind is str:
            pieces = quoted_apart(value, self.raw) if self.raw in value else None
            if pieces is None:
                return None
            return lambda raw, facts: raw.join(pieces)
        if value is None or kind in _SCALARS:
            return None
        if value is self.facts:
            return lambda raw, facts: facts
        if kind is DriverVersion and value.raw == self.raw:
            raise CannotSwap("the result holds the driver as a version")  # its numbers are the representative's
        record_fields = getattr(kind, "__record_names__", None)
        if record_fields is not None:
            held = self.inert.get(id(value))
            if held is not None and self.raw not in held[1]:  # none of its words can quote this driver
                return None
            parts = []
            for name in record_fields:
                item = getattr(value, name)
                # Most fields are text that does not quote the driver, a scalar or an empty tuple:
                # decided here, without a call.
                if type(item) is str and self.raw not in item or item is None or type(item) in _SCALARS or type(item) is tuple and not item:
                    continue
                step = self.plan(item)
                if step is not None:
                    parts.append((name, step))
            if not parts:
                return None
            return lambda raw, facts: replace(value, **{name: step(raw, facts) for name, step in parts})
        if kind is tuple or kind is list:
            inert, raw = self.inert, self.raw
            # a result's findings are mostly the fleet's stand-ins: asked of here, without a call
            steps = [
                (i, step) for i, item in enumerate(value)
                if ((held := inert.get(id(item))) is None or raw in held[1]) and (step := self.plan(item)) is not None
            ]
            if not steps:
                return None

            def rebuilt(raw: str, facts: HostFacts) -> Any:
                items = list(value)
                for i, step in steps:
                    items[i] = step(raw, facts)
                return kind(items)

            return rebuilt
        if kind is dict:
            keyed = [(key, step) for key, item in value.items() if (step := self.plan(item)) is not None]
            if not keyed:
                return None
            return lambda raw, facts: {**value, **{key: step(raw, facts) for key, step in keyed}}
        if isinstance(value, (set, frozenset)) and any(self.plan(item) is not None for item in value):
            raise CannotSwap("a set quotes the driver")  # no order to rebuild it in: judged alone
        return None


_SCALARS = (int, bool, float)


def _planned(swapper: _Swapper, value: Any) -> Swap:
    step = swapper.plan(value)
    return step if step is not None else (lambda raw, facts: value)


class SharedChecks:
    """The judged classes of one fleet run: ``get`` a host's result from its class, else ``put``
    the one its own check gave."""

    def __init__(self, table: CompatTable, request: Request):
        self.enabled = _shareable(request)
        self.drivers = table_drivers(table) if self.enabled else ()
        # class -> its first host's result (_Judged), its planned rewrite, or None: it cannot be rewritten
        self.judged: dict[object, Union[_Judged, tuple[Swap, Swap], None]] = {}
        self.plain: dict[int, bool] = {}  # id of a host's facts without its driver version -> they quote no driver
        # id of a host's GPUs -> (them, how many memory sizes they have): the memo holds what it names
        self.sizes: dict[int, tuple[object, int]] = {}
        self.plain_parts: dict[int, tuple[object, bool]] = {}  # id of a field's value -> (it, it quotes no driver)
        self.inert: dict[int, tuple[object, str]] = {}  # id -> (a record, its texts joined): hold_inert

    def key(self, rest: Optional[HostFacts], raw: Optional[str], facts: HostFacts) -> Optional[object]:
        """The class of a host: ``rest``, what decides its verdict but its driver's version (one
        object per distinct value: fleet/judge.py), and where its driver ``raw`` sits among the
        table's; None when it is judged alone. GPUs of more than one memory size are judged alone
        too: the verdict key ranks the sizes, while the words of multi-gpu-mixed quote them."""
        if not self.enabled or not raw or rest is None or raw != raw.strip():
            return None
        sizes = self.sizes.get(id(facts.gpus))
        if sizes is None:  # labelled nodes of one GPU set share their GPUs' object (fleet/gfd.py)
            sizes = self.sizes[id(facts.gpus)] = (facts.gpus, len({g.memory_total_bytes for g in facts.gpus if g.memory_total_bytes}))
        if sizes[1] > 1:
            return None
        plain = self.plain.get(id(rest))
        if plain is None:
            plain = self.plain[id(rest)] = all(self._plain_part(getattr(rest, f.name)) for f in fields(rest))
        found = driver_class(raw, self.drivers) if plain else None
        return (id(rest), found) if found is not None else None

    @staticmethod
    def driver_position(key: Optional[object]) -> Optional[object]:
        """Where a class's drivers sit among the table's versions (driver_class), of its ``key``:
        every driver decision compares the driver with those versions, so drivers that sit alike
        get the same support tier for every CUDA where NVML says the same. None for no class."""
        return key[1] if isinstance(key, tuple) else None

    def hold_inert(self, value: Any) -> None:
        """A record every class's result may hold as it is (the fleet's stand-in for a finding that
        passes): its texts, and the text of any driver version in it, kept joined once, so that a
        class's rewrite asks one question of it (do they hold its driver?) instead of walking it.
        A host's facts in it hold their driver's text, so the class they are the facts of walks it."""
        texts = (leaf.raw if isinstance(leaf, DriverVersion) else leaf for leaf in _leaves(value))
        self.inert[id(value)] = (value, "\0".join(text for text in texts if type(text) is str))

    def _plain_part(self, value: Any) -> bool:
        """quotes_no_driver of one field of a host's facts, once per object: hosts of one GPU set or
        platform share those objects (fleet/judge.py _Rests)."""
        known = self.plain_parts.get(id(value))
        if known is None:
            known = self.plain_parts[id(value)] = (value, quotes_no_driver(value))
        return known[1]

    def get(self, key: Optional[object], facts: HostFacts) -> Optional[tuple[CheckResult, Optional[Answer]]]:
        entry = self.judged.get(key) if key is not None else None
        if entry is None:
            return None
        if isinstance(entry, _Judged):  # the class's second host: its rewrite is planned now
            swapper = _Swapper(entry.raw, entry.facts, self.inert)
            try:
                entry = self.judged[key] = (_planned(swapper, entry.result), _planned(swapper, entry.answer))
            except CannotSwap:
                self.judged[key] = None  # the class's other hosts are checked themselves
                return None
        raw = facts.driver.driver_version
        assert raw is not None  # a key is only made for a host with a driver version
        result, answer = entry
        return result(raw, facts), answer(raw, facts)

    def put(self, key: Optional[object], facts: HostFacts, result: CheckResult, answer: Optional[Answer]) -> None:
        """The class's first result, kept as it is: most classes of a varied fleet hold one host,
        so the rewrite is planned only when a second one asks (``get``)."""
        if key is not None and facts.driver.driver_version and key not in self.judged:
            self.judged[key] = _Judged(facts.driver.driver_version, facts, result, answer)


class _Judged:
    """A class's first host and its result, before any other host of it has asked."""

    __slots__ = ("raw", "facts", "result", "answer")

    def __init__(self, raw: str, facts: HostFacts, result: CheckResult, answer: Optional[Answer]):
        self.raw, self.facts, self.result, self.answer = raw, facts, result, answer
