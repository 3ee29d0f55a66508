"""Bad tables, files and option values are usage errors (exit 2, one line), never a crash or a verdict."""

from __future__ import annotations

import copy
import json

import pytest

from helpers import REPO_ROOT, run_cli

SHIPPED = json.loads((REPO_ROOT / "data" / "compat_table.json").read_text())


def test_a_table_without_image_families_is_refused(tmp_path):
    table = copy.deepcopy(SHIPPED)
    table["image_families"] = []
    path = tmp_path / "t.json"
    path.write_text(json.dumps(table))
    run = run_cli("table", "--validate", str(path))
    assert run.exit_code == 2 and "lists no image family" in run.stderr


@pytest.mark.parametrize("flag,name,text", [
    ("--table", "deep.json", '{"a":' * 100000 + "1" + "}" * 100000),
    ("--snapshot", "deep.json", '{"a":' * 100000 + "1" + "}" * 100000),
    ("--families", "deep.toml", "a = " + "[" * 100000 + "]" * 100000 + "\n"),
])
def test_absurdly_nested_files_are_usage_errors(tmp_path, flag, name, text):
    path = tmp_path / name
    path.write_text(text)
    run = run_cli("check", flag, str(path), "--driver", "550.54.15")
    assert run.exit_code == 2, run.stderr
    assert run.stderr.count("\n") == 1 and "nested too deeply" in run.stderr


def test_timeout_must_be_a_number(tmp_path):
    run = run_cli("check", "--docker", "--timeout", "nan")
    assert run.exit_code == 2 and run.stderr.startswith("cudadoctor: error: ")


def test_a_gpu_product_listed_twice_is_refused(tmp_path):
    table = copy.deepcopy(SHIPPED)
    k80 = next(g for g in table["gpus"] if g["name"] in ("K80", "Tesla K80"))
    twin = copy.deepcopy(k80)
    twin["cc"] = "5.0"
    table["gpus"].append(twin)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(table))
    run = run_cli("table", "--validate", str(path))
    assert run.exit_code == 2 and "is already used by gpus[" in run.stderr


def test_validate_and_table_together_is_a_usage_error():
    run = run_cli("table", "--validate", str(REPO_ROOT / "data" / "compat_table.json"), "--table", str(REPO_ROOT / "data" / "compat_table.json"))
    assert run.exit_code == 2 and "not both" in run.stderr
