"""report/json_text.py writes exactly what ``json.dumps(value, indent=2)`` writes: for the
values it writes itself and for those it leaves to json, and for the reports the CLI prints."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cudadoctor.report.json_text import dumps_indented, quoted

scalars = (
    st.none() | st.booleans() | st.integers() | st.integers(-(2**70), 2**70)
    | st.floats() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text() | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF))
)  # fmt: skip
keys = st.text() | st.sampled_from(["", "driver", "\u00e9", "\ud800", "a\nb"])
odd_keys = st.integers() | st.floats() | st.booleans() | st.none()
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.lists(inner, max_size=4).map(tuple)
    | st.dictionaries(keys, inner, max_size=4)
    | st.dictionaries(keys | odd_keys, inner, max_size=3),
    max_leaves=25,
)


@settings(max_examples=600)
@given(documents)
def test_any_json_value_is_written_as_json_writes_it(value: Any) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2)


class Tag(str):
    pass


class Count(int):
    pass


def test_subclasses_nan_and_infinities_are_written_by_json_itself() -> None:
    for value in ({"a": Tag("x")}, [Count(3)], {"n": math.nan, "i": [-math.inf, math.inf]}, {1: "one", None: [True]}):
        assert dumps_indented(value) == json.dumps(value, indent=2)


@given(st.text())
def test_a_key_is_quoted_as_json_quotes_it(text: str) -> None:
    assert quoted(text) == json.dumps(text)


def test_the_documents_the_cli_prints_are_laid_out_as_json_lays_them_out(fake_nvml_env) -> None:
    from helpers import host, run_cli

    env = fake_nvml_env({"count": 8})
    for args in (("check", "--json"), ("check", "--json", "--snapshot", host("h100-535")),
                 ("recommend", "--image", "--format", "json", "--snapshot", host("rtx5090-570")), ("probe",)):  # fmt: skip
        run = run_cli(*args, env=env)
        assert run.exit_code in (0, 1), run.stderr
        assert run.stdout == json.dumps(json.loads(run.stdout), indent=2) + "\n", args
