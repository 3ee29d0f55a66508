"""Bad input, whatever its size or content, is one short line and exit 2 (issue 12, items 1 and 2).

Every option that takes a value and every reader of a user's file is driven with a 10 kB value and
with values holding a newline or a carriage return; then the classes of value that used to end in
an internal error (exit 3) or a hang are each tried once."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers import HOSTS, host
from hardening import assert_one_short_error, run_main

SNAPSHOT = host("h100-550")
LONG = "9" * 10_000
ODD = ["a\nb", "a\rb", "x\x1b[31my"]

# Each: the argument list for a value; the option's value is the last element.
OPTIONS = {
    "check --driver": lambda v: ["check", "--snapshot", SNAPSHOT, "--driver", v],
    "check --gpu": lambda v: ["check", "--snapshot", SNAPSHOT, "--gpu", v],
    "check --torch": lambda v: ["check", "--snapshot", SNAPSHOT, "--torch", v],
    "check --family": lambda v: ["check", "--snapshot", SNAPSHOT, "--family", v],
    "check --variant": lambda v: ["check", "--snapshot", SNAPSHOT, "--variant", v],
    "check --min-memory": lambda v: ["check", "--snapshot", SNAPSHOT, "--min-memory", v],
    "check --require": lambda v: ["check", "--snapshot", SNAPSHOT, "--require", "cuda>=" + v],
    "check --image": lambda v: ["check", "--snapshot", SNAPSHOT, "--image", v],
    "check --timeout": lambda v: ["check", "--snapshot", SNAPSHOT, "--timeout", v],
    "check --snapshot": lambda v: ["check", "--snapshot", v],
    "check --table": lambda v: ["check", "--snapshot", SNAPSHOT, "--table", v],
    "check --families": lambda v: ["check", "--snapshot", SNAPSHOT, "--families", v],
    "recommend --gpu": lambda v: ["recommend", "--snapshot", SNAPSHOT, "--gpu", v],
    "recommend --torch": lambda v: ["recommend", "--snapshot", SNAPSHOT, "--torch", v],
    "recommend --format": lambda v: ["recommend", "--snapshot", SNAPSHOT, "--format", v],
    "table --torch": lambda v: ["table", "--torch", v],
    "table --gpu": lambda v: ["table", "--gpu", v],
    "table --validate": lambda v: ["table", "--validate", v],
    "probe --output": lambda v: ["probe", "--output", os.path.join("/nonexistent-dir", v)],
    "probe --prometheus": lambda v: ["probe", "--prometheus", os.path.join("/nonexistent-dir", v)],
    "fleet --format": lambda v: ["fleet", SNAPSHOT, "--format", v],
    "unknown option": lambda v: ["check", "--" + v],
    "unknown command": lambda v: [v],
}


@pytest.mark.parametrize("value", [LONG, *ODD], ids=["10kB", "newline", "cr", "escape"])
@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_every_option_gives_one_short_line(option: str, value: str) -> None:
    assert_one_short_error(run_main(OPTIONS[option](value)), option)


def test_the_message_still_says_what_is_accepted() -> None:
    outcome = run_main(["check", "--snapshot", SNAPSHOT, "--driver", LONG])
    assert "expected numbers separated by dots" in outcome.stderr
    assert "..." in outcome.stderr


@pytest.mark.parametrize("variable", ["CUDADOCTOR_TABLE", "CUDADOCTOR_FAMILIES"])
@pytest.mark.parametrize("value", [LONG, *ODD], ids=["10kB", "newline", "cr", "escape"])
def test_environment_variables_naming_files(variable: str, value: str) -> None:
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT], env={variable: value}), variable)


def _snapshot_with(change) -> dict:
    data = json.loads(Path(SNAPSHOT).read_text())
    change(data)
    return data


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# A file reader quoting a field's value: the value is 10 kB or holds a newline.
@pytest.mark.parametrize("value", [LONG, *ODD], ids=["10kB", "newline", "cr", "escape"])
def test_snapshot_validator_quotes_briefly(tmp_path: Path, value: str) -> None:
    def bad_state(d):
        d["host"]["driver"]["nvml_state"] = value

    def bad_type(d):
        d["host"]["gpus"][0]["index"] = value

    for change in (bad_state, bad_type):
        path = _write(tmp_path, "s.json", json.dumps(_snapshot_with(change)))
        assert_one_short_error(run_main(["check", "--snapshot", path]), change.__name__)


def _table() -> dict:
    from cudadoctor.app.loader import default_table_path

    return json.loads(Path(default_table_path()).read_text())


@pytest.mark.parametrize("value", [LONG, *ODD], ids=["10kB", "newline", "cr", "escape"])
def test_table_validator_quotes_briefly(tmp_path: Path, value: str) -> None:
    table = _table()
    table["pytorch_releases"][0]["version"] = value
    path = _write(tmp_path, "t.json", json.dumps(table))
    assert_one_short_error(run_main(["table", "--validate", path]))
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--table", path]))


@pytest.mark.parametrize("value", [LONG, *ODD], ids=["10kB", "newline", "cr", "escape"])
def test_families_validator_quotes_briefly(tmp_path: Path, value: str) -> None:
    for key in ("tag_template", "repository_x"):
        text = f'[[family]]\nname = "acme"\nrepository = "r/acme"\n{key} = {json.dumps(value)}\n'
        path = _write(tmp_path, "f.toml", text)
        assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--families", path]), key)


# ---- values that used to be internal errors (exit 3) ---------------------------------------------


def test_a_5000_digit_integer_in_a_snapshot_or_table(tmp_path: Path) -> None:
    text = Path(SNAPSHOT).read_text().replace('"index": 0', '"index": ' + "7" * 5000, 1)
    assert_one_short_error(run_main(["check", "--snapshot", _write(tmp_path, "s.json", text)]))
    table = json.dumps(_table()).replace('"schema": 1', '"schema": ' + "7" * 5000, 1)
    assert_one_short_error(run_main(["table", "--validate", _write(tmp_path, "t.json", table)]))
    families = f'[[family]]\nname = "a"\nrepository = "r/a"\ntag_template = "{{torch}}-{{variant}}"\nx = {"7" * 5000}\n'
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--families", _write(tmp_path, "f.toml", families)]))


def test_large_integers_and_non_finite_numbers_in_a_snapshot(tmp_path: Path) -> None:
    for value in (str(2**70), "NaN", "Infinity", "-1e999"):
        text = Path(SNAPSHOT).read_text().replace('"index": 0', '"index": ' + value, 1)
        assert_one_short_error(run_main(["check", "--snapshot", _write(tmp_path, "s.json", text)]), value)
    data = _snapshot_with(lambda d: d["host"]["gpus"][0].__setitem__("memory_total_bytes", 10**300))
    assert_one_short_error(run_main(["check", "--snapshot", _write(tmp_path, "s.json", json.dumps(data))]))


def test_a_lone_surrogate_in_a_snapshot_or_a_table(tmp_path: Path) -> None:
    data = _snapshot_with(lambda d: d["host"]["gpus"][0].__setitem__("name", "H100 \ud800"))
    assert_one_short_error(run_main(["check", "--snapshot", _write(tmp_path, "s.json", json.dumps(data))]))
    table = _table()
    table["image_families"][0]["repository"] = "pytorch/\udfff"
    path = _write(tmp_path, "t.json", json.dumps(table))
    assert_one_short_error(run_main(["table", "--validate", path]))
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--table", path]))


def test_a_valid_surrogate_pair_is_fine(tmp_path: Path) -> None:
    data = _snapshot_with(lambda d: d["host"]["gpus"][0].__setitem__("name", "H100 \U0001f600"))
    outcome = run_main(["check", "--snapshot", _write(tmp_path, "s.json", json.dumps(data)), "--json"])
    assert outcome.exit_code in (0, 1), outcome.stderr


@pytest.mark.parametrize("value", ["５３５", "٥٣٥.١٠٤", "5３5"])
def test_unicode_digits_are_not_a_driver_version(value: str) -> None:
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--driver", value]))


@pytest.mark.parametrize("value", ["1" * 400 + "GiB", "9" * 5000 + "TiB", "1e400GiB", "２GiB"])
def test_min_memory_out_of_range(value: str) -> None:
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--min-memory", value]))


def test_a_huge_number_in_require() -> None:
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--require", "cuda>=" + "1" * 5000]))
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--require", "driver>=" + "0" * 5000 + "1" * 30]))


def test_a_huge_cuda_version_in_an_image_is_a_finding() -> None:
    from cudadoctor.model.nvidia_require import image_requirements

    collected = image_requirements({"CUDA_VERSION": "1" * 5000 + ".0"})
    assert collected.legacy_error is not None


@pytest.mark.parametrize(
    "change, what",
    [
        (lambda t: t["pytorch_releases"][0].__setitem__("default_variant", ["cu126"]), "default_variant list"),
        (lambda t: t["gpus"][0].__setitem__("architecture", 2**70), "architecture 2**70"),
        (lambda t: t["gpus"][0].__setitem__("architecture", float("nan")), "architecture NaN"),
        (lambda t: t["gpus"][0].__setitem__("architecture", ["/"]), "architecture [/]"),
        (lambda t: t["image_families"][0].__setitem__("tag_template", "{torch}-{variant}{"), "stray {"),
        (lambda t: t["image_families"][0].__setitem__("tag_template", "{torch}}-{variant}"), "stray }"),
        (lambda t: t["image_families"][0].__setitem__("tag_template", "{torch!r}-{variant}"), "conversion"),
        (lambda t: t["image_families"][0].__setitem__("tag_template", "{{torch}}-{variant}"), "escaped brace"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_table_values_that_crashed_later_are_refused_at_validation(tmp_path: Path, change, what: str) -> None:
    table = _table()
    change(table)
    path = _write(tmp_path, "t.json", json.dumps(table))
    assert_one_short_error(run_main(["table", "--validate", path]), what)
    assert_one_short_error(run_main(["table", "--gpus", "--table", path]), what)


def test_an_architecture_with_markup_prints_literally(tmp_path: Path) -> None:
    table = _table()
    table["gpus"][0]["architecture"] = "[/]"
    path = _write(tmp_path, "t.json", json.dumps(table))
    outcome = run_main(["table", "--gpus", "--table", path])
    assert outcome.exit_code == 0, outcome.stderr
    assert "[/]" in outcome.stdout


@pytest.mark.parametrize("template", ["{torch}-{variant}{", "{torch}}-{variant}"])
def test_a_families_template_with_a_stray_brace(tmp_path: Path, template: str) -> None:
    text = f'[[family]]\nname = "acme"\nrepository = "r/acme"\ntag_template = "{template}"\n'
    path = _write(tmp_path, "f.toml", text)
    assert_one_short_error(run_main(["check", "--snapshot", SNAPSHOT, "--families", path]))
    assert_one_short_error(run_main(["table", "--validate", _write(tmp_path, "t.json", json.dumps(_table())), "--families", path]))


# ---- files that are not regular files: refused at once, never read -------------------------------


@pytest.mark.parametrize("option", ["--families", "--table", "--snapshot"])
@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "/dev/null", "fifo", "directory"])
def test_special_files_are_refused_without_blocking(tmp_path: Path, option: str, target: str) -> None:
    if target == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)  # no writer: opening it for reading the usual way would block forever
    elif target == "directory":
        path = str(tmp_path)
    else:
        path = target
    args = ["check", option, path] if option == "--snapshot" else ["check", "--snapshot", SNAPSHOT, option, path]
    outcome = run_main(args)
    assert_one_short_error(outcome, target)
    assert "regular file" in outcome.stderr or "directory" in outcome.stderr


def test_a_file_over_the_size_cap_is_refused(tmp_path: Path) -> None:
    from cudadoctor.app import loader

    path = tmp_path / "big.json"
    with open(path, "wb") as handle:
        handle.truncate(loader.MAX_FILE_BYTES + 1)  # sparse: no disk used
    outcome = run_main(["check", "--snapshot", str(path)])
    assert_one_short_error(outcome)
    assert "too large" in outcome.stderr


def test_a_nul_in_a_file_name() -> None:
    assert_one_short_error(run_main(["check", "--snapshot", "a\x00b"]))


def test_probe_output_empty_is_refused() -> None:
    outcome = run_main(["probe", "--output", ""])
    assert_one_short_error(outcome)
    assert outcome.stdout == ""


def test_the_shipped_hosts_still_load() -> None:
    for path in sorted(HOSTS.glob("*.json")):
        outcome = run_main(["check", "--snapshot", str(path), "--json"])
        assert outcome.exit_code in (0, 1), (path, outcome.stderr)
