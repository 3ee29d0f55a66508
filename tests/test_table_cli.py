"""`cudadoctor table`, user image families (--families / $CUDADOCTOR_FAMILIES) and family references."""

from __future__ import annotations

import json

import pytest

from cudadoctor.compat.families import FamiliesError
from cudadoctor.app.loader import load_families
from cudadoctor.app.loader import load_table
from helpers import run_cli


def _cli(*args, env_extra=None):
    return run_cli(*args, env=env_extra, unset=("CUDADOCTOR_FAMILIES",))


@pytest.fixture(scope="module")
def table():
    return load_table()


def test_overview_marks_each_driver_row_not_printed_as_a_version_in_table_3():
    # 13.3.0: NVIDIA's redistributable manifest; 12.8.2: the runfile's name; 13.4.1: the R615 branch NVIDIA prints.
    lines = _cli("table").stdout.splitlines()
    row = {line.strip("│").split()[0]: line for line in lines if line.startswith("│")}
    assert "†" in row["13.3.0"] and "‡" in row["12.8.2"] and "§" in row["13.4.1"] and " 615 " in row["13.4.1"]
    assert not any(mark in row["13.2.2"] for mark in "†‡§")
    notes = [line for line in lines if line[:1] in "†‡§"]
    assert [n[0] for n in notes] == ["†", "‡", "§"] and "driver branch" in notes[2]


def test_overview_shows_driver_table_and_matrix():
    result = _cli("table")
    assert result.returncode == 0, result.stderr
    assert "530.30.02" in result.stdout and "580.65.06" in result.stdout
    assert "cu126 cu128* cu129 cu130" in result.stdout  # 2.9 row, default marked


def test_torch_view_json():
    data = json.loads(_cli("table", "--torch", "2.9", "--json").stdout)
    assert data["default_variant"] == "cu128"
    by_name = {v["name"]: v for v in data["variants"]}
    assert set(by_name) == {"cu126", "cu128", "cu129", "cu130"}
    assert by_name["cu128"]["min_driver_linux"] == "570.26" and by_name["cu128"]["default"] is True
    assert by_name["cu130"]["min_driver_windows"] is None  # NVIDIA prints N/A for 13.x on Windows
    assert by_name["cu126"]["arch_list"][0] == "5.0"
    assert "pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime" in by_name["cu128"]["images"]
    assert "pytorch/pytorch:2.9.1-cuda12.9-cudnn9-runtime" in by_name["cu129"]["images"]  # 2.9.1's matrix had 12.9
    cu129 = {v["name"]: v for v in json.loads(_cli("table", "--torch", "2.13", "--json").stdout)["variants"]}["cu129"]
    assert cu129["images"] == ["pytorch-cuda:v2.13-cu129"]  # no official image for cu129 in 2.13
    assert cu129["ptx_unknown"] is True and cu129["ptx"] == []


def test_a_linux_only_variant_has_no_windows_driver():
    """2.12 cu129 is published for Linux only: its Windows driver is null, not Table 3's 12.9 row."""
    by_name = {v["name"]: v for v in json.loads(_cli("table", "--torch", "2.12", "--json").stdout)["variants"]}
    assert by_name["cu129"]["platforms"] == ["linux"] and by_name["cu129"]["min_driver_windows"] is None
    assert by_name["cu126"]["min_driver_windows"] == "560.76"  # published for Windows too


def test_torch_view_text():
    result = _cli("table", "--torch", "2.5")
    assert result.returncode == 0
    assert "cu124: machine code for sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90; PTX: none" in result.stdout
    assert "pip install 'torch==2.5.*' --index-url" in result.stdout


def test_torch_view_prints_the_install_form_pytorch_documents_for_old_releases():
    # PyTorch's previous-versions page: -f .../torch_stable.html for 1.2-1.10 (the default wheel plain from
    # PyPI), --extra-index-url for 1.11-1.13, and for 1.0/1.1 only "Download and install wheel from" a page.
    text = _cli("table", "--torch", "1.7").stdout
    assert "pip install 'torch==1.7.1+cu92' -f https" in text and "/whl/torch_stable.html" in text
    assert "pip install 'torch==1.7.1'\n" in text.replace(" \n", "\n")
    assert "--index-url" not in text
    assert "pip install 'torch==1.13.1+cu117' --extra-index-url https" in _cli("table", "--torch", "1.13").stdout
    view = json.loads(_cli("table", "--torch", "1.0", "--json").stdout)
    assert view["install_style"] == "wheel-page"
    by_name = {v["name"]: v for v in view["variants"]}
    assert by_name["cu90"]["pip_command"] == "pip install 'torch==1.0.1'"  # PyPI's plain 1.0.1 wheel is cu90
    assert by_name["cu100"]["pip_command"] is None and by_name["cu100"]["wheel_page_url"].endswith("/whl/cu100/torch_stable.html")


def test_gpu_view_product_and_cc():
    data = json.loads(_cli("table", "--gpu", "NVIDIA GeForce RTX 3060", "--json").stdout)
    assert data["name"] == "GeForce RTX 3060" and data["cc"] == "8.6" and data["forward_compat"] == "not supported"
    rows = {row["torch"]: row for row in data["pytorch_builds"]}
    assert rows["2.9"]["sass"] == ["cu126", "cu128", "cu129", "cu130"]
    data = json.loads(_cli("table", "--gpu", "3.7", "--json").stdout)
    assert "Tesla K80" in data["products"]
    builds = {row["torch"]: row["sass"] for row in data["pytorch_builds"]}
    assert builds["2.5"] == ["cu118"] and builds["2.7"] == []  # 2.7 cu118's sm_37 was third-party only
    assert builds["1.13"] == ["cu116", "cu117"]


def test_gpu_view_unknown_name_exits_2():
    result = _cli("table", "--gpu", "Imaginary X9000")
    assert result.returncode == 2
    assert result.stderr.strip().startswith("cudadoctor: error: unknown GPU 'Imaginary X9000'")
    assert "cudadoctor table --gpus" in result.stderr


def test_gpus_and_sources_views():
    gpus = json.loads(_cli("table", "--gpus", "--json").stdout)
    assert len(gpus) >= 80
    sources = json.loads(_cli("table", "--sources", "--json").stdout)
    table3 = next(s for s in sources if s["key"] == "nvidia-cuda-rn-table3")
    assert table3["cited_by"] == 56 and "Table 3" in table3["section"]
    assert "Where each fact comes from" in _cli("table", "--sources").stdout


def test_whole_table_json_and_view_conflict():
    data = json.loads(_cli("table", "--json").stdout)
    assert data["schema"] == 1 and len(data["cuda_releases"]) == 71
    result = _cli("table", "--gpus", "--sources")
    assert result.returncode == 2 and "not several" in result.stderr


# --- image families -----------------------------------------------------------------------------


def test_parse_family_reference(table):
    family, release, variant = table.parse_family_reference("pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime")
    assert (family.name, release.version, variant.name) == ("pytorch/pytorch", "2.5", "cu124")
    family, release, variant = table.parse_family_reference("docker.io/pytorch/pytorch:2.3.0-cuda11.8-cudnn8-devel")
    assert (family.name, release.version, variant.name) == ("pytorch/pytorch:devel", "2.3", "cu118")
    family, release, variant = table.parse_family_reference("pytorch-cuda:v2.9-cu130")
    assert (family.name, release.version, variant.name) == ("pytorch-cuda", "2.9", "cu130")
    assert table.parse_family_reference("pytorch/pytorch:2.13.0-cuda12.9-cudnn9-runtime") is None  # never published
    assert table.parse_family_reference("pytorch/pytorch:2.5.1-cuda12.4-cudnn8-runtime") is None  # wrong cuDNN
    assert table.parse_family_reference("pytorch/pytorch:latest") is None
    assert table.parse_family_reference("ubuntu:22.04") is None


def test_every_family_tag_parses_back(table):
    for family in table.image_families:
        for release in table.pytorch_releases:
            for name in family.variants_for(release):
                ref = family.reference(release, release.variant(name))
                found = table.parse_family_reference(ref)
                assert found is not None, ref
                assert (found[1].version, found[2].name) == (release.version, name), ref


def test_official_family_has_real_tags_and_each_release_offers_exactly_its_variants(table):
    official = table.family("pytorch/pytorch")
    assert official.name == "pytorch/pytorch"
    assert official.reference(table.release("2.5"), table.release("2.5").variant("cu124")) == "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    assert official.reference(table.release("2.1"), table.release("2.1").variant("cu121")) == "pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime"
    default = table.family("pytorch-cuda")
    for release in table.pytorch_releases:
        assert default.variants_for(release) == tuple(v.name for v in release.variants)


def test_recommend_with_official_family():
    result = _cli("recommend", "--image", "--family", "pytorch/pytorch", "--torch", "2.5", "--driver", "550.54.14",
                  "--gpu", "A100", "--format", "tag")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    result = _cli("recommend", "--image", "--family", "pytorch/pytorch:devel", "--torch", "2.13", "--driver", "575.51.03",
                  "--gpu", "RTX 4090", "--format", "tag")
    assert result.stdout.strip() == "pytorch/pytorch:2.13.0-cuda12.6-cudnn9-devel"  # cu129 has no official image in 2.13


FAMILIES = """
[[family]]
name = "acme/pytorch"
repository = "registry.example.com/acme/pytorch"
tag_template = "{torch_full}-{variant}-slim"
description = "ACME's images"

[family.offers]
"2.9" = ["cu126", "cu128"]
"2.8" = ["cu126"]
"""


def test_user_families_file(tmp_path, table):
    path = tmp_path / "families.toml"
    path.write_text(FAMILIES, encoding="utf-8")
    extended = load_families(str(path), table)
    family = extended.family("acme/pytorch")
    assert family.variants_for(extended.release("2.9")) == ("cu126", "cu128")
    assert extended.family("pytorch/pytorch").name == "pytorch/pytorch"  # the table's own stay
    found = extended.parse_family_reference("registry.example.com/acme/pytorch:2.9.1-cu128-slim")
    assert (found[0].name, found[2].name) == ("acme/pytorch", "cu128")
    result = _cli("recommend", "--image", "--families", str(path), "--family", "acme/pytorch", "--torch", "2.9",
                  "--driver", "570.26", "--gpu", "A100", "--format", "tag")
    assert result.stdout.strip() == "registry.example.com/acme/pytorch:2.9.1-cu128-slim"
    # the same file through the environment variable, on `check` and `table`
    env = {"CUDADOCTOR_FAMILIES": str(path)}
    data = json.loads(_cli("check", "--json", "--family", "acme/pytorch", "--torch", "2.9", "--driver", "570.26",
                           "--gpu", "A100", env_extra=env).stdout)
    assert data["recommendation"]["image"] == "registry.example.com/acme/pytorch:2.9.1-cu128-slim"
    view = json.loads(_cli("table", "--torch", "2.8", "--json", env_extra=env).stdout)
    assert "registry.example.com/acme/pytorch:2.8.0-cu126-slim" in view["variants"][0]["images"]


@pytest.mark.parametrize(
    "text,message",
    [
        ('[[family]]\nname = "x"\nrepository = "r"\ntag_template = "{torch}-{variant}"\n[family.offers]\n"2.9" = ["cu118"]\n',
         "family[x]: offers cu118 for PyTorch 2.9, which that release does not ship"),
        ('[[family]]\nname = "x"\nrepository = "r"\ntag_template = "{torch}-{gpu}"\n',
         "family[x]: tag_template uses {gpu}; allowed:"),
        ('[[family]]\nname = "x"\nrepository = "r"\ntag_template = "latest"\n',
         "family[x]: tag_template 'latest' must name the release"),
        ('[[family]]\nname = "pytorch-cuda"\nrepository = "r"\ntag_template = "{torch}-{variant}"\n',
         "family[pytorch-cuda]: the name is already used by another family"),
        ('[[family]]\nname = "x"\nrepository = "r"\ntag_template = "{torch}-{variant}"\n[family.offers]\n"9.9" = ["cu126"]\n',
         "family[x]: offers PyTorch 9.9, which the table does not list"),
        ('[[family]]\nrepository = "r"\n', "family #1: 'name' must be a non-empty string"),
        ("[[family]\n", "not valid TOML"),
        ('title = "x"\n', "unknown top-level key 'title'"),
    ],
    ids=["variant-not-shipped", "unknown-placeholder", "no-placeholders", "name-taken", "unknown-release",
         "no-name", "bad-toml", "unknown-key"],
)
def test_bad_families_file(tmp_path, table, text, message):
    path = tmp_path / "families.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FamiliesError) as caught:
        load_families(str(path), table)
    assert str(caught.value).startswith(f"families file {path}: ")
    assert message in str(caught.value)


def test_bad_families_file_exits_2_on_every_command(tmp_path):
    path = tmp_path / "families.toml"
    path.write_text('[[family]]\nname = "x"\nrepository = "r"\ntag_template = "{torch}"\n', encoding="utf-8")
    for args in (("table", "--families", str(path)), ("recommend", "--image", "--families", str(path)),
                 ("check", "--families", str(path), "--driver", "580.65.06")):
        result = _cli(*args)
        assert result.returncode == 2, args
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"cudadoctor: error: families file {path}: family[x]")
    result = _cli("table", env_extra={"CUDADOCTOR_FAMILIES": str(tmp_path / "missing.toml")})
    assert result.returncode == 2 and "no such file" in result.stderr
