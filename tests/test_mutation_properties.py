"""Property: however a valid snapshot or table is mutated, field by field, cudadoctor answers with
a report (exit 0 or 1) or with one short line (exit 2): never an internal error (exit 3), never a
traceback, never a line over the bound (issue 12, item 8).

Runs in-process through the real entry point (tests/hardening.run_main) for speed, with a modest
number of examples; a few mutated files also go through a fresh process."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hardening import Outcome, run_main
from helpers import HOSTS, host, run_cli

from cudadoctor.app.loader import default_table_path
from cudadoctor.model.text import LINE_LIMIT

HOST_FILES = sorted(HOSTS.glob("*.json"))
TABLE = json.loads(Path(default_table_path()).read_text())

# Values a field may be replaced with: every JSON type, the edges of each, and text that is long,
# holds control characters, markup, lone surrogates or non-ASCII digits.
NASTY_TEXT = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["", " ", "\n", "a\rb", "\x1b[31m", "[red]x[/]", "[/]", "\ud800", "５３５", "{", "}", "{torch",
                     "0", "-1", "1e999", "NaN", "x" * 10_000, "12.4", "535.104.05", "8.0", "cu126", "sm_90"]),
)  # fmt: skip
NASTY = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, -1, 1, 2**31, 2**64, 2**70, 10**400, -(10**400)]),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    NASTY_TEXT,
    st.lists(st.one_of(st.integers(), NASTY_TEXT, st.none()), max_size=3),
    st.dictionaries(NASTY_TEXT, st.one_of(st.integers(), NASTY_TEXT), max_size=2),
)


def paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON tree (objects' keys, lists' positions), the root excluded."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            found.append(prefix + (key,))
            found.extend(paths(value, prefix + (key,)))
    elif isinstance(data, list):
        for i, value in enumerate(data[:6]):  # the first few entries of long lists stand for the rest
            found.append(prefix + (i,))
            found.extend(paths(value, prefix + (i,)))
    return found


def mutate(data: Any, path: tuple, action: str, value: Any) -> Any:
    copy = json.loads(json.dumps(data))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(last, parent[last])
    else:
        parent[last] = value
    return copy


def write_json(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data, allow_nan=True), encoding="utf-8", errors="surrogatepass")
    return str(path)


def assert_answered(outcome: Outcome, expect_json: bool) -> None:
    assert outcome.exit_code in (0, 1, 2), (outcome.exit_code, outcome.stderr[:2000])
    assert "Traceback" not in outcome.stderr and "internal error" not in outcome.stderr, outcome.stderr[:2000]
    if outcome.exit_code == 2:
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1 and len(lines[0]) <= LINE_LIMIT, outcome.stderr[:2000]
        return
    if expect_json:
        json.loads(outcome.stdout)
    else:
        assert outcome.stdout.strip()


SNAPSHOT_PATHS = st.sampled_from(HOST_FILES).flatmap(
    lambda p: st.tuples(st.just(p), st.sampled_from(paths(json.loads(p.read_text()))))
)
TABLE_PATHS = st.sampled_from(paths(TABLE))
ACTIONS = st.sampled_from(["replace", "replace", "replace", "delete", "duplicate"])
# CUDADOCTOR_TEST_EXAMPLES raises the count for a deeper search (the suite keeps it modest).
SETTINGS = settings(max_examples=int(os.environ.get("CUDADOCTOR_TEST_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(where=SNAPSHOT_PATHS, action=ACTIONS, value=NASTY, as_json=st.booleans())
def test_a_mutated_snapshot_is_a_report_or_one_line(tmp_path_factory, where, action, value, as_json) -> None:
    source, path = where
    data = mutate(json.loads(source.read_text()), path, action, value)
    file = write_json(tmp_path_factory.mktemp("snap") / "s.json", data)
    outcome = run_main(["check", "--snapshot", file] + (["--json"] if as_json else []))
    assert_answered(outcome, as_json)
    if outcome.exit_code != 2:  # a snapshot that loads also serves recommend
        assert_answered(run_main(["recommend", "--snapshot", file, "--format", "json"]), True)


@SETTINGS
@given(path=TABLE_PATHS, action=ACTIONS, value=NASTY, view=st.sampled_from(["check", "gpus", "torch", "overview", "json"]))
def test_a_mutated_table_is_a_report_or_one_line(tmp_path_factory, path, action, value, view) -> None:
    data = mutate(TABLE, path, action, value)
    file = write_json(tmp_path_factory.mktemp("table") / "t.json", data)
    validated = run_main(["table", "--validate", file])
    assert_answered(validated, False)
    args = {
        "check": ["check", "--snapshot", host("v100-h100-550"), "--table", file],
        "gpus": ["table", "--gpus", "--table", file],
        "torch": ["table", "--torch", "2.5", "--table", file],
        "overview": ["table", "--table", file],
        "json": ["table", "--json", "--table", file],
    }[view]
    outcome = run_main(args)
    assert_answered(outcome, view == "json")
    # What --validate accepts, every command accepts.
    if validated.exit_code == 0:
        assert outcome.exit_code != 2 or "--torch" in args or "2.5" in outcome.stderr, outcome.stderr


def test_the_mutations_reach_every_kind_of_place() -> None:
    assert len(paths(TABLE)) > 200
    assert all(len(paths(json.loads(p.read_text()))) > 10 for p in HOST_FILES)
    assert math.isnan(mutate({"a": 1}, ("a",), "replace", float("nan"))["a"])


def test_a_few_mutations_through_a_fresh_process(tmp_path: Path) -> None:
    cases = [
        mutate(json.loads(Path(host("h100-550")).read_text()), ("host", "gpus", 0, "name"), "replace", "\ud800\x1b[31m"),
        mutate(json.loads(Path(host("h100-550")).read_text()), ("host", "gpus", 0, "memory_total_bytes"), "replace", 10**400),
        mutate(json.loads(Path(host("a100-525.json".removesuffix(".json"))).read_text()), ("host", "driver"), "replace", [1]),
    ]
    for i, data in enumerate(cases):
        file = write_json(tmp_path / f"{i}.json", data)
        proc = run_cli("check", "--snapshot", file)
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.splitlines()) == 1 and len(proc.stderr) <= LINE_LIMIT + 1
