"""The team config file: --config FILE, else $XDG_CONFIG_HOME/cudadoctor/config.toml, else
~/.config/cudadoctor/config.toml; the default family, its repository, the table and families."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import REPO_ROOT, host, invoke, run_cli

TABLE = REPO_ROOT / "data" / "compat_table.json"


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_repository_prefix_names_the_team_registry(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", 'repository = "registry.example.com/ml/pytorch-cuda"\n')
    data = invoke("recommend", "--config", config, "--format", "json", "--torch", "2.11", "--snapshot", host("h100-550")).json()
    assert data["recommendation"]["image"] == "registry.example.com/ml/pytorch-cuda:v2.11-cu129"
    text = invoke("check", "--config", config, "--torch", "2.11", "--snapshot", host("h100-550")).stdout
    assert "tags are a convention" not in text  # the team mirrors them: no note
    tag = invoke("recommend", "--config", config, "--format", "tag", "--torch", "2.11", "--snapshot", host("h100-550"))
    assert tag.stdout == "registry.example.com/ml/pytorch-cuda:v2.11-cu129\n"


def test_the_convention_note_appears_once_for_unprefixed_convention_tags_and_never_by_default() -> None:
    text = invoke("check", "--torch", "2.11", "--family", "pytorch-cuda", "--snapshot", host("h100-550")).stdout
    assert text.count("tags are a convention") == 1 and "--family pytorch/pytorch" in text
    assert max(len(line) for line in text.splitlines() if "convention" in line) <= 130  # one line
    default = invoke("check", "--torch", "2.11", "--snapshot", host("h100-550")).stdout
    assert "convention" not in default and "pytorch/pytorch:2.11.0-cuda12.9-cudnn9-runtime" in default


def test_a_repository_without_a_family_keeps_naming_the_convention_tags(tmp_path: Path) -> None:
    """Configs written when pytorch-cuda was the default family keep naming the images they name."""
    config = write(tmp_path / "c.toml", 'repository = "registry.example.com/ml/pytorch-cuda"\n')
    tag = invoke("recommend", "--config", config, "--format", "tag", "--driver", "535.104.05", "--gpu", "A100")
    assert tag.exit_code == 0 and tag.stdout.startswith("registry.example.com/ml/pytorch-cuda:v2.")
    mirror = write(tmp_path / "m.toml", 'family = "pytorch/pytorch"\nrepository = "mirror.example.com/pytorch/pytorch"\n')
    tag = invoke("recommend", "--config", mirror, "--format", "tag", "--driver", "535.104.05", "--gpu", "A100")
    assert tag.stdout == "mirror.example.com/pytorch/pytorch:2.14.1-cuda12.6-cudnn9-runtime\n"  # 2.14 has cu126 images


def test_the_default_family_and_the_flag_that_overrides_it(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", 'family = "pytorch/pytorch"\n')
    data = invoke("recommend", "--config", config, "--format", "json", "--torch", "2.11", "--snapshot", host("h100-550")).json()
    assert data["recommendation"]["family"] == "pytorch/pytorch"
    assert data["recommendation"]["image"].startswith("pytorch/pytorch:")
    flag = invoke("recommend", "--config", config, "--family", "pytorch-cuda", "--format", "json", "--torch", "2.11", "--snapshot", host("h100-550"))
    assert flag.json()["recommendation"]["family"] == "pytorch-cuda"


def test_pytorch_pytorch_gives_a_pullable_reference() -> None:
    run = invoke("recommend", "--family", "pytorch/pytorch", "--format", "tag", "--driver", "570.86.10", "--gpu", "A100", "--torch", "2.7")
    assert run.exit_code == 0
    assert run.stdout.strip() == "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"


def test_the_default_file_is_read_from_xdg_config_home_then_home(tmp_path: Path) -> None:
    write(tmp_path / "xdg" / "cudadoctor" / "config.toml", 'repository = "xdg.example.com/pytorch-cuda"\n')
    write(tmp_path / "home" / ".config" / "cudadoctor" / "config.toml", 'repository = "home.example.com/pytorch-cuda"\n')
    args = ("recommend", "--format", "tag", "--torch", "2.11", "--snapshot", host("h100-550"))
    assert run_cli(*args, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")}).stdout.startswith("xdg.example.com/")
    assert run_cli(*args, env={"XDG_CONFIG_HOME": "", "HOME": str(tmp_path / "home")}).stdout.startswith("home.example.com/")
    # No file at all: the shipped defaults.
    assert run_cli(*args, env={"XDG_CONFIG_HOME": str(tmp_path / "empty")}).stdout.startswith("pytorch/pytorch:")


def test_table_and_families_files_relative_to_the_config(tmp_path: Path) -> None:
    shutil.copy(TABLE, tmp_path / "team-table.json")
    write(
        tmp_path / "families.toml",
        '[[family]]\nname = "acme/pytorch"\nrepository = "registry.example.com/acme/pytorch"\ntag_template = "{torch_full}-{variant}"\n',
    )
    config = write(tmp_path / "c.toml", 'table = "team-table.json"\nfamilies = "families.toml"\nfamily = "acme/pytorch"\n')
    data = invoke("check", "--config", config, "--json", "--torch", "2.11", "--snapshot", host("h100-550")).json()
    assert data["table"]["path"] == str(tmp_path / "team-table.json")
    assert data["recommendation"]["image"] == "registry.example.com/acme/pytorch:2.11.0-cu129"


def test_the_environment_wins_over_the_config(tmp_path: Path) -> None:
    config = write(tmp_path / "c.toml", 'table = "/nonexistent/table.json"\n')
    run = run_cli("check", "--config", config, "--json", "--torch", "2.11", "--snapshot", host("h100-550"), env={"CUDADOCTOR_TABLE": str(TABLE)})
    assert run.exit_code == 0, run.stderr
    assert json.loads(run.stdout)["table"]["path"] == str(TABLE)


@pytest.mark.parametrize(
    "text, message",
    [
        ("famly = 'x'\n", "unknown key 'famly'"),
        ("family = \n", "not valid TOML"),
        ("family = 3\n", "'family' must be a non-empty string"),
        ("family = 'nope/nope'\n", "unknown family 'nope/nope'"),
        ("families = [1]\n", "'families' must be a file name"),
        ("repository = 'registry.example.com/x:latest'\n", "without a tag"),
        ("table = 'missing.json'\n", "no such file"),
    ],
)
def test_a_bad_config_is_one_line_and_exit_2(tmp_path: Path, text: str, message: str) -> None:
    config = write(tmp_path / "c.toml", text)
    run = run_cli("check", "--config", config, "--torch", "2.11", "--snapshot", host("h100-550"))
    assert run.exit_code == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and message in run.stderr, run.stderr


def test_a_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    run = run_cli("recommend", "--config", str(tmp_path / "none.toml"))
    assert run.exit_code == 2 and "no such file" in run.stderr


@pytest.mark.parametrize("kind", ["config", "families"])
def test_a_number_too_long_for_python_is_one_line_in_either_toml_file(tmp_path: Path, kind: str) -> None:
    """Config and families files share one TOML reader: a 5000-digit integer is a bad file (exit
    2, one line saying so), not CPython's int-conversion message."""
    path = tmp_path / f"{kind}.toml"
    path.write_text(f"n = {'9' * 5000}\n")
    flag = "--config" if kind == "config" else "--families"
    run = invoke("check", flag, str(path), "--driver", "580.65.06", "--gpu", "H100")
    assert run.exit_code == 2 and len(run.stderr.splitlines()) == 1
    assert f"not a usable {kind} file (a number in it is too long)" in run.stderr
