"""The CLI and the Python API assemble their inputs in one place (cudadoctor/app/inputs.py): the
config file, the table and families with their variables, and $CUDADOCTOR_TODAY give the same
answer, and the same one-line error, through both."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Optional

import pytest

import cudadoctor
from cudadoctor import api
from helpers import REPO_ROOT, host, invoke, run_cli

TABLE = REPO_ROOT / "data" / "compat_table.json"
SNAPSHOT = host("h100-550")
TEAM = 'family = "pytorch-cuda"\nrepository = "registry.example.com/ml/pytorch-cuda"\n'
TEAM_IMAGE_211 = "registry.example.com/ml/pytorch-cuda:v2.11-cu129"


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def family_file(path: Path, name: str) -> str:
    return write(
        path,
        f'[[family]]\nname = "{name}"\nrepository = "registry.example.com/{name}"\ntag_template = "{{torch_full}}-{{variant}}"\n',
    )


def cli_tag(*args: str) -> str:
    run = invoke("recommend", "--image", "--format", "tag", "--snapshot", SNAPSHOT, *args)
    assert run.exit_code == 0, run.stderr
    return run.stdout.strip()


def test_cli_and_api_name_the_same_image_under_a_config_file(tmp_path: Path) -> None:
    config = write(tmp_path / "team.toml", TEAM)
    cli_image = cli_tag("--config", config, "--torch", "2.11")
    assert cli_image == TEAM_IMAGE_211
    assert cudadoctor.recommend(SNAPSHOT, torch="2.11", config=config)["recommendation"]["image"] == cli_image
    assert cudadoctor.check(SNAPSHOT, torch="2.11", config=Path(config))["recommendation"]["image"] == cli_image
    cli_check = invoke("check", "--json", "--config", config, "--torch", "2.11", "--snapshot", SNAPSHOT).json()
    assert cli_check["recommendation"]["image"] == cli_image
    # A table loaded once carries the config into every call it is passed to.
    table = cudadoctor.load_table(config=config)
    assert cudadoctor.recommend(SNAPSHOT, torch="2.11", table=table)["recommendation"]["image"] == cli_image
    # With no release asked for, both judge the same default target under the config.
    default_cli = invoke("recommend", "--format", "json", "--config", config, "--snapshot", SNAPSHOT).json()
    default_api = cudadoctor.recommend(SNAPSHOT, config=config)
    assert default_api == default_cli
    # ... and the whole report of `check --json` is the API's.
    assert invoke("check", "--json", "--config", config, "--snapshot", SNAPSHOT).json() == cudadoctor.check(SNAPSHOT, config=config)


def test_cli_and_api_read_the_default_config_file_from_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "xdg" / "cudadoctor" / "config.toml", TEAM)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert cli_tag("--torch", "2.11") == TEAM_IMAGE_211
    assert cudadoctor.recommend(SNAPSHOT, torch="2.11")["recommendation"]["image"] == TEAM_IMAGE_211
    assert cudadoctor.check(SNAPSHOT, torch="2.11")["recommendation"]["image"] == TEAM_IMAGE_211
    fresh = run_cli("recommend", "--image", "--format", "tag", "--torch", "2.11", "--snapshot", SNAPSHOT)
    assert fresh.stdout == TEAM_IMAGE_211 + "\n", fresh.stderr
    # Without a config file the shipped default family names the image, in both.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty"))
    plain = cli_tag("--torch", "2.11")
    assert plain != TEAM_IMAGE_211
    assert cudadoctor.recommend(SNAPSHOT, torch="2.11")["recommendation"]["image"] == plain


BAD_CONFIGS = {
    "unknown-key": ('colour = "blue"\n', "unknown key"),
    "bad-repository": ('repository = "registry.example.com/ml/pytorch-cuda:v2"\n', "must be a repository without a tag"),
    "unknown-family": ('family = "no/such-family"\n', "unknown family"),
    "not-toml": ("family = \n", "not valid TOML"),
}


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cudadoctor: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0][len("cudadoctor: error: "):]


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_a_bad_config_is_one_line_in_the_cli_and_the_same_error_in_the_api(name: str, tmp_path: Path) -> None:
    text, words = BAD_CONFIGS[name]
    config = write(tmp_path / "c.toml", text)
    run = invoke("recommend", "--config", config, "--torch", "2.11", "--snapshot", SNAPSHOT)
    assert run.exit_code == 2
    message = one_error_line(run.stderr)
    assert words in message and "c.toml" in message
    for call in (
        lambda: cudadoctor.recommend(SNAPSHOT, torch="2.11", config=config),
        lambda: cudadoctor.check(SNAPSHOT, torch="2.11", config=config),
        lambda: cudadoctor.load_table(config=config),
    ):
        with pytest.raises(cudadoctor.CudadoctorError) as caught:
            call()
        assert str(caught.value) == message


def test_a_bad_default_config_file_stops_the_cli_and_the_api_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "xdg" / "cudadoctor" / "config.toml", 'colour = "blue"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    fresh = run_cli("check", "--snapshot", SNAPSHOT)
    assert fresh.exit_code == 2
    message = one_error_line(fresh.stderr)
    assert "config.toml" in message and "unknown key" in message
    with pytest.raises(cudadoctor.CudadoctorError, match="unknown key") as caught:
        cudadoctor.check(SNAPSHOT)
    assert str(caught.value) == message


def test_a_config_named_that_does_not_exist_is_refused_by_both(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.toml")
    run = invoke("check", "--config", missing, "--snapshot", SNAPSHOT)
    assert run.exit_code == 2 and "no such file" in one_error_line(run.stderr)
    with pytest.raises(cudadoctor.CudadoctorError, match="no such file"):
        cudadoctor.check(SNAPSHOT, config=missing)


def outcome_cli(table: Optional[str], families: Optional[str], config: Optional[str], family: Optional[str]) -> tuple[str, str]:
    args = ["recommend", "--image", "--format", "tag", "--torch", "2.11", "--snapshot", SNAPSHOT]
    for flag, value in (("--table", table), ("--families", families), ("--config", config), ("--family", family)):
        if value is not None:
            args += [flag, value]
    run = invoke(*args)
    if run.exit_code == 0:
        return "image", run.stdout.strip()
    assert run.exit_code == 2, run.stderr
    return "error", one_error_line(run.stderr)


def outcome_api(table: Optional[str], families: Optional[str], config: Optional[str], family: Optional[str]) -> tuple[str, str]:
    try:
        data: dict[str, Any] = api.recommend(SNAPSHOT, torch="2.11", table=table, families=families, config=config, family=family)
    except api.CudadoctorError as exc:
        return "error", str(exc)
    return "image", data["recommendation"]["image"]


def precedence_files(tmp_path: Path) -> dict[str, str]:
    team_table = tmp_path / "team-table.json"
    shutil.copy(TABLE, team_table)
    return {
        "team_table": str(team_table),
        "config_families": family_file(tmp_path / "config-families.toml", "acme/config"),
        "env_families": family_file(tmp_path / "env-families.toml", "acme/env"),
        "flag_families": family_file(tmp_path / "flag-families.toml", "acme/flag"),
        "config": write(
            tmp_path / "c.toml",
            'table = "/nonexistent/config-table.json"\nfamilies = "config-families.toml"\nrepository = "registry.example.com/ml/pytorch-cuda"\n',
        ),
    }


# (what is set, the arguments: table, families, config, family; what both must answer)
PRECEDENCE = {
    # The config's table is read when nothing else names one: here it does not exist.
    "config-table-is-read": ({}, (None, None, "config", None), ("error", "config-table.json")),
    # $CUDADOCTOR_TABLE wins over the config's table; the flag wins over both.
    "env-table-beats-config": ({"CUDADOCTOR_TABLE": "team_table"}, (None, None, "config", None), ("image", "registry.example.com/ml/")),
    "flag-table-beats-env": ({"CUDADOCTOR_TABLE": "/nonexistent/env.json"}, ("team_table", None, None, None), ("image", "pytorch/pytorch:2.11.0-cuda")),
    "env-table-is-read": ({"CUDADOCTOR_TABLE": "/nonexistent/env.json"}, (None, None, None, None), ("error", "env.json")),
    # The config's families are added when nothing else names a families file.
    "config-families": ({"CUDADOCTOR_TABLE": "team_table"}, (None, None, "config", "acme/config"), ("image", "registry.example.com/acme/config:")),
    # $CUDADOCTOR_FAMILIES replaces the config's families; the flag replaces both.
    "env-families-beat-config": (
        {"CUDADOCTOR_TABLE": "team_table", "CUDADOCTOR_FAMILIES": "env_families"},
        (None, None, "config", "acme/config"),
        ("error", "unknown image family 'acme/config'"),
    ),
    "env-families-are-read": (
        {"CUDADOCTOR_TABLE": "team_table", "CUDADOCTOR_FAMILIES": "env_families"},
        (None, None, "config", "acme/env"),
        ("image", "registry.example.com/acme/env:"),
    ),
    "flag-families-beat-env": (
        {"CUDADOCTOR_FAMILIES": "env_families"},
        (None, "flag_families", None, "acme/env"),
        ("error", "unknown image family 'acme/env'"),
    ),
    "flag-families-are-read": (
        {"CUDADOCTOR_FAMILIES": "env_families"},
        (None, "flag_families", None, "acme/flag"),
        ("image", "registry.example.com/acme/flag:"),
    ),
}


@pytest.mark.parametrize("case", sorted(PRECEDENCE))
def test_cli_and_api_agree_on_table_families_and_environment_precedence(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = precedence_files(tmp_path)
    env, arguments, (kind, expected) = PRECEDENCE[case]
    for name, value in env.items():
        monkeypatch.setenv(name, files.get(value, value))
    resolved = tuple(files.get(a, a) if a is not None else None for a in arguments)
    cli_answer = outcome_cli(*resolved)
    assert cli_answer == outcome_api(*resolved)
    assert cli_answer[0] == kind and expected in cli_answer[1], cli_answer


def test_the_api_judges_the_table_s_age_at_cudadoctor_today(monkeypatch: pytest.MonkeyPatch) -> None:
    def codes(data: dict[str, Any]) -> list[str]:
        return [f["code"] for f in data["findings"]]

    monkeypatch.setenv("CUDADOCTOR_TODAY", "2027-12-01")
    assert "table-outdated" in codes(cudadoctor.check(SNAPSHOT))
    assert "table-outdated" in invoke("check", "--json", "--snapshot", SNAPSHOT).codes()
    monkeypatch.setenv("CUDADOCTOR_TODAY", "2026-12-01")
    assert "table-outdated" not in codes(cudadoctor.check(SNAPSHOT))
    monkeypatch.setenv("CUDADOCTOR_TODAY", "yesterday")
    run = invoke("check", "--json", "--snapshot", SNAPSHOT)
    assert run.exit_code == 2
    with pytest.raises(cudadoctor.CudadoctorError) as caught:
        cudadoctor.check(SNAPSHOT)
    assert str(caught.value) == one_error_line(run.stderr)


def test_a_loaded_table_and_config_together_are_refused(tmp_path: Path) -> None:
    config = write(tmp_path / "team.toml", TEAM)
    table = cudadoctor.load_table()
    with pytest.raises(cudadoctor.CudadoctorError, match="load_table"):
        cudadoctor.recommend(SNAPSHOT, table=table, config=config)


def test_a_snapshot_dict_that_is_not_json_is_one_error() -> None:
    snapshot = json.loads(Path(SNAPSHOT).read_text(encoding="utf-8"))
    snapshot["host"] = {"driver": {1, 2}}  # a set: no JSON document holds one
    with pytest.raises(cudadoctor.CudadoctorError, match="^snapshot: not a JSON document"):
        cudadoctor.check(snapshot)
