"""A JSON document written member by member (cli/inputs.json_members_text, the fleet's report) is
the same text one json.dumps(indent=2) of the whole document writes, whatever the values hold."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, strategies as st

from cudadoctor.cli.inputs import json_members_text

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.lists(st.text(), max_size=4) | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4) | st.dictionaries(st.integers(), inner, max_size=2), max_leaves=20
)
_MEMBERS = st.lists(st.tuples(st.text(max_size=8), _VALUES, st.booleans()), max_size=6, unique_by=lambda m: m[0])


def _text(members: list[tuple[str, Any, bool]]) -> str:
    # A member flagged lazy whose value is a list is given as an iterator of its entries.
    return "".join(json_members_text((key, iter(value) if lazy and isinstance(value, list) else value)
                                     for key, value, lazy in members))


@given(_MEMBERS)
def test_member_by_member_text_is_the_whole_documents_dumps(members: list[tuple[str, Any, bool]]) -> None:
    assert _text(members) == json.dumps({key: value for key, value, _ in members}, indent=2)


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
