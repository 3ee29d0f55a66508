"""A JSON document written member by member (cli/inputs.json_members_text, the fleet's report) is
the same text one json.dumps(indent=2) of the whole document writes, whatever the values hold."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, strategies as st

from cudadoctor.cli.inputs import json_members_text

_TEXTS = st.text() | st.text(st.characters(min_codepoint=0x70, max_codepoint=0x80)) | st.sampled_from(["\U0001f600", "\ud800", "\x7f"])
_EXACT_SCALARS = st.none() | st.booleans() | st.integers() | _TEXTS  # the fleet's documents hold no float


def _values(scalars: Any) -> Any:
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.lists(st.text(), max_size=4) | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4) | st.dictionaries(st.integers(), inner, max_size=2),
        max_leaves=20,
    )


def _members(scalars: Any) -> Any:
    return st.lists(st.tuples(st.text(max_size=8), _values(scalars), st.booleans()), max_size=6, unique_by=lambda m: m[0])


def _text(members: list[tuple[str, Any, bool]]) -> str:
    # A member flagged lazy whose value is a list is given as an iterator of its entries.
    return "".join(json_members_text((key, iter(value) if lazy and isinstance(value, list) else value)
                                     for key, value, lazy in members))


@given(_members(_EXACT_SCALARS))
def test_member_by_member_text_is_the_whole_documents_dumps(members: list[tuple[str, Any, bool]]) -> None:
    assert _text(members) == json.dumps({key: value for key, value, _ in members}, indent=2)


@given(_members(_EXACT_SCALARS | st.floats(allow_nan=False, allow_infinity=False)))
def test_a_document_with_floats_reads_back_as_the_same_values(members: list[tuple[str, Any, bool]]) -> None:
    # A float's exponent is written as msgspec writes it (1e16, not 1e+16): the same number.
    document = {key: value for key, value, _ in members}
    text = _text(members)
    assert json.loads(text) == json.loads(json.dumps(document))
    assert text.isascii()


def test_a_key_msgspec_cannot_write_is_written_as_json_writes_it() -> None:
    members = [("m", {True: [1], None: "x"}), ("n", {"k": "\ud800"})]
    assert "".join(json_members_text(members)) == json.dumps(dict(members), indent=2)


def test_an_iterator_member_is_written_as_a_list_entry_by_entry() -> None:
    made: list[int] = []

    def entries() -> Any:
        for n in range(3):
            made.append(n)
            yield {"n": n, "names": ["a\nb", "c"]}

    pieces = json_members_text([("schema", 1), ("groups", entries()), ("empty", iter(())), ("tail", [])])
    first = next(pieces) + next(pieces)
    assert made == []  # nothing of the list is built before it is written
    text = first + "".join(pieces)
    assert made == [0, 1, 2]
    assert json.loads(text) == {"schema": 1, "groups": [{"n": n, "names": ["a\nb", "c"]} for n in range(3)], "empty": [], "tail": []}
    assert text == json.dumps(json.loads(text), indent=2)


def test_no_members_is_an_empty_object() -> None:
    assert "".join(json_members_text([])) == json.dumps({}, indent=2)


def test_entries_laid_out_at_their_own_depth_join_into_one_dumps_text() -> None:
    # Each entry is laid out inside a frame that is cut off afterwards: long runs of entries, and
    # one msgspec cannot write (json then writes it), still join into json's text.
    entries: list[Any] = [{"n": n, "text": "é\n" * (n % 3), "list": list(range(n % 4)), "empty": {}} for n in range(300)]
    entries[130] = {True: "a key json writes as text"}
    for count in (1, 2, 131, 300):
        members = [("groups", entries[:count]), ("tail", 1)]
        lazy = [("groups", iter(entries[:count])), ("tail", 1)]
        assert "".join(json_members_text(lazy)) == json.dumps(dict(members), indent=2)
