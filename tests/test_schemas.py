"""The published JSON Schemas: shipped, printed by `cudadoctor schema`, current, and enforced on
every JSON the CLI prints in the tests (tests/schema_check.py, installed by conftest.py)."""

from __future__ import annotations

import json

import jsonschema
import pytest

import make_schemas
import schema_check
from helpers import host, invoke, run_cli

OUTPUTS = ("check", "probe", "recommend", "table")


@pytest.mark.parametrize("name", OUTPUTS)
def test_each_json_output_has_a_current_draft_2020_12_schema(name: str) -> None:
    path = schema_check.SCHEMA_DIR / f"{name}.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert path.read_text(encoding="utf-8") == make_schemas.render(name), (
        f"{path.name} is out of date: run .venv/bin/python tests/make_schemas.py"
    )


@pytest.mark.parametrize("name", OUTPUTS)
def test_schema_command_prints_the_shipped_file(name: str) -> None:
    run = invoke("schema", name)
    assert run.exit_code == 0
    assert json.loads(run.stdout) == json.loads((schema_check.SCHEMA_DIR / f"{name}.schema.json").read_text())


# Written by hand (not generated from records): the fleet's, `table update`'s, the nodeAffinity's and the scan's.
HANDWRITTEN = ("fleet", "table_update", "table_learn", "node-affinity", "scan")


@pytest.mark.parametrize("name", HANDWRITTEN)
def test_each_handwritten_schema_is_draft_2020_12_and_printed(name: str) -> None:
    schema = json.loads((schema_check.SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert json.loads(invoke("schema", name).stdout) == schema


def test_schema_command_names_the_known_schemas() -> None:
    listed = invoke("schema")
    assert listed.exit_code == 0 and set(OUTPUTS + HANDWRITTEN) <= set(listed.stdout.split())
    unknown = run_cli("schema", "nope")
    assert unknown.exit_code == 2 and unknown.stdout == ""
    assert len(unknown.stderr.strip().splitlines()) == 1 and "check" in unknown.stderr


def test_the_hooks_validate_in_process_and_child_process_output() -> None:
    before = schema_check.Counter.validated
    invoke("check", "--json", "--snapshot", host("t4-470"))
    assert schema_check.Counter.validated == before + 1
    run_cli("recommend", "--format", "json", "--snapshot", host("h100-550"))
    assert schema_check.Counter.validated == before + 2


def test_a_document_missing_a_documented_key_is_rejected() -> None:
    data = invoke("check", "--json", "--snapshot", host("t4-470")).json()
    del data["findings"][0]["gpu_index"]
    with pytest.raises(AssertionError, match="gpu_index"):
        schema_check.validate("check", data)
    data = invoke("check", "--json", "--snapshot", host("t4-470")).json()
    data["host"]["driver"].pop("driver_version")
    with pytest.raises(AssertionError, match="driver_version"):
        schema_check.validate("check", data)


def test_every_finding_has_every_key_and_fixes_are_data() -> None:
    data = invoke("check", "--json", "--torch", "2.11", "--family", "pytorch-cuda", "--snapshot", host("t4-470")).json()
    for finding in data["findings"]:
        assert "gpu_index" in finding and isinstance(finding["actions"], list)
    too_old = next(f for f in data["findings"] if f["code"] == "driver-too-old")
    assert too_old["actions"][0]["action"] == "upgrade-driver"
    assert too_old["actions"][0]["min_driver"] == "580.65.06" and too_old["actions"][0]["variant"] == "cu130"
    none = data["no_recommendation"]
    assert none["fixes"] and len(none["actions"]) == len(none["fixes"])  # worded and as data, in one order
    upgrade, release = none["actions"]
    assert upgrade == {**upgrade, "action": "upgrade-driver", "min_driver": "525.60.13", "variant": "cu126", "support": "minor-compat"}
    assert release == {**release, "action": "use-release", "torch": "2.7", "variant": "cu118", "image": "pytorch-cuda:v2.7-cu118"}
    assert none["alternative"]["image"] == "pytorch-cuda:v2.7-cu118"


def test_later_additions_do_not_break_the_schemas() -> None:
    data = invoke("check", "--json", "--torch", "2.11", "--snapshot", host("h100-550")).json()
    data["recommendation"]["future_key"] = {"new": "key"}
    data["findings"][0]["another"] = 1
    data["host"]["gpus"][0]["new_fact"] = True
    schema_check.validate("check", data)


def test_table_views_have_every_key(tmp_path) -> None:
    bare = invoke("table", "--gpu", "8.0", "--json").json()
    product = invoke("table", "--gpu", "A100", "--json").json()
    assert set(bare) == set(product)
    assert bare["name"] is None and product["products"] == []


def test_an_arch_failure_names_the_release_to_use_as_data() -> None:
    # 2.5 cu118 is the newest official build with sm_37 (the sm_37 of 2.6/2.7 cu118 was third-party only)
    data = invoke("check", "--json", "--torch", "2.8", "--snapshot", host("k80-470")).json()
    arch = [f for f in data["findings"] if f["code"] == "gpu-arch-not-built"]
    assert arch and all(f["actions"][0]["action"] == "use-release" and f["actions"][0]["torch"] == "2.5" for f in arch)
    pinned = invoke("check", "--json", "--driver", "570.86.16", "--gpu", "RTX 5090", "--torch", "2.7", "--variant", "cu118").json()
    arch = next(f for f in pinned["findings"] if f["code"] == "gpu-arch-not-built")
    assert {a["action"] for a in arch["actions"]} == {"use-variant"} and "cu128" in {a["variant"] for a in arch["actions"]}
