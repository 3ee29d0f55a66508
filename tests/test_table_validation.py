"""The shipped table passes every rule; each broken table fails naming the entry and the rule."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from cudadoctor.compat.table import TableError
from cudadoctor.app.loader import default_table_path, load_table
from helpers import run_cli

SHIPPED = json.loads(Path(default_table_path()).read_text(encoding="utf-8"))


def test_shipped_table_is_valid_and_sourced():
    table = load_table(default_table_path())
    assert table.schema == 1 and table.updated
    cited = set()
    for rows in (table.cuda_releases, table.minor_version_compat, table.toolkit_architectures,
                 table.compute_capabilities, table.gpus, table.pytorch_releases, table.image_families, table.features):
        cited |= {row.source for row in rows}
    cited |= {v.source for r in table.pytorch_releases for v in r.variants}
    cited |= {b.source for b in table.forward_compat.branches if b.source}  # a branch's lifecycle names its page
    keys = {s.key for s in table.sources}
    assert cited <= keys
    assert all(s.document for s in table.sources)


def _release(data, version):
    return next(r for r in data["pytorch_releases"] if r["version"] == version)


def _variant(data, version, name):
    return next(v for v in _release(data, version)["variants"] if v["name"] == name)


def _set(path, value):
    def change(data):
        target = data
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    return change


BROKEN = [
    # (rule, change, text the message must contain)
    ("unknown compute capability in an arch list",
     lambda d: _variant(d, "2.9", "cu128")["arch_list"].append("9.9"),
     "pytorch_releases[2.9].variants[cu128]: arch_list: unknown compute capability 9.9"),
    ("a variant with no driver row",
     lambda d: _release(d, "2.9")["variants"].append(
         {"name": "cu127", "cuda": "12.7", "arch_list": ["8.0"], "ptx": [], "cudnn": None, "source": "torch-wheel-metadata"}),
     "pytorch_releases[2.9].variants[cu127]: CUDA 12.7 has no row in cuda_releases"),
    ("an unparsable driver version",
     _set(["cuda_releases", 6, "min_driver_linux"], "410.4x"),
     "cuda_releases[10.0.130]: min_driver_linux: invalid driver version '410.4x'"),
    ("an unparsable CUDA version",
     _set(["cuda_releases", 3, "version"], "eleven"),
     "cuda_releases[3]: version: invalid CUDA version 'eleven'"),
    ("an unparsable compute capability",
     _set(["compute_capabilities", 0, "cc"], "three"),
     "compute_capabilities[0]: cc: invalid compute capability 'three'"),
    ("a missing source",
     lambda d: _variant(d, "2.5", "cu121").pop("source"),
     "pytorch_releases[2.5].variants[cu121]: missing source"),
    ("a source key that is not defined",
     _set(["gpus", 0, "source"], "nowhere"),
     "gpus[Tesla K80]: source 'nowhere' is not defined under 'sources'"),
    ("CUDA releases out of order",
     lambda d: d["cuda_releases"].insert(0, d["cuda_releases"].pop(5)),
     "is out of order"),
    ("PyTorch releases out of order",
     lambda d: d["pytorch_releases"].reverse(),
     "pytorch_releases: release"),
    ("variants out of order",
     lambda d: _release(d, "2.9")["variants"].reverse(),
     "pytorch_releases[2.9].variants: variant"),
    ("a duplicate CUDA row",
     lambda d: d["cuda_releases"].insert(1, copy.deepcopy(d["cuda_releases"][0])),
     "cuda_releases: duplicate CUDA release"),
    ("a minimum driver lower than an older release's",
     _set(["cuda_releases", 8, "min_driver_linux"], "400.1"),
     "cuda_releases[10.2.89]: minimum Linux driver 400.1 is lower than that of the older CUDA"),
    ("an arch the variant's toolkit cannot build",
     lambda d: _variant(d, "2.5", "cu121")["arch_list"].insert(0, "3.7"),
     "pytorch_releases[2.5].variants[cu121]: arch_list 3.7 is outside what CUDA 12.1 can build for"),
    ("an install style PyTorch's pages do not use",
     lambda d: _release(d, "1.7").__setitem__("install_style", "conda"),
     "pytorch_releases[1.7]: install_style 'conda' must be one of index-url, extra-index-url, find-links, wheel-page"),
    ("a default variant the release does not ship",
     lambda d: _release(d, "2.9").__setitem__("default_variant", "cu118"),
     "pytorch_releases[2.9]: default_variant 'cu118' is not one of its variants"),
    ("an image family offering a variant the release does not ship",
     lambda d: next(f for f in d["image_families"] if f["name"] == "pytorch/pytorch")["offers"]["2.9"].append("cu118"),
     "image_families[pytorch/pytorch]: offers cu118 for PyTorch 2.9, which that release does not ship"),
    ("a GPU name used twice",
     lambda d: d["gpus"][1]["aliases"].append("K80"),
     "gpus[Tesla K40]: name 'K80' is already used by gpus[Tesla K80]"),
    ("an unknown evidence kind",
     lambda d: _variant(d, "2.9", "cu126").__setitem__("evidence", "rumour"),
     "pytorch_releases[2.9].variants[cu126]: evidence 'rumour' must be one of"),
    ("an unparsable update date",
     _set(["updated"], "30/11/2026"),
     "'updated' must be a date written YYYY-MM-DD"),
    ("a driver row of unknown evidence",
     lambda d: next(r for r in d["cuda_releases"] if r["version"] == "13.3.0").__setitem__("evidence", "forum post"),
     "cuda_releases[13.3.0]: evidence 'forum post' must be one of release-notes, redist-manifest, runfile-name, "
     "driver-branch"),
    ("a driver row not from Table 3 without a note",
     lambda d: next(r for r in d["cuda_releases"] if r["version"] == "13.3.0").__setitem__("note", ""),
     "cuda_releases[13.3.0]: a row not read from Table 3 (evidence redist-manifest) needs a note"),
    ("a branch designation NVIDIA does not use",
     lambda d: _branch(d, 580).__setitem__("designation", "LTS"),
     "forward_compatibility.branches[580]: designation 'LTS' must be one of LTSB, PB, NFB"),
    ("an end of life that is not a month",
     lambda d: _branch(d, 580).__setitem__("end_of_life", "June 2028"),
     "forward_compatibility.branches[580]: end_of_life must be a month YYYY-MM"),
    ("a branch lifecycle without a source",
     lambda d: _branch(d, 620).pop("source"),
     "forward_compatibility.branches[620]: missing source"),
    ("an end of life without a designation",
     lambda d: _branch(d, 620).__setitem__("designation", None),
     "forward_compatibility.branches[620]: an end of life needs the branch's designation"),
]


def _branch(data, number):
    return next(b for b in data["forward_compatibility"]["branches"] if b["branch"] == number)


@pytest.mark.parametrize("rule,change,message", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_table_names_entry_and_rule(tmp_path, rule, change, message):
    data = copy.deepcopy(SHIPPED)
    change(data)
    path = tmp_path / "table.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_table(str(path))
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"table {path}: ")


def test_duplicate_json_keys_are_rejected_with_their_entry(tmp_path):
    text = Path(default_table_path()).read_text(encoding="utf-8")
    broken = text.replace('"min_driver_linux": "530.30.02",', '"min_driver_linux": "530.30.02", "min_driver_linux": "535.54.03",', 1)
    assert broken != text
    path = tmp_path / "dup.json"
    path.write_text(broken, encoding="utf-8")
    with pytest.raises(TableError, match=r"duplicate key 'min_driver_linux' in the entry with version '12\.1\.0'"):
        load_table(str(path))


def _cli(*args, env=None):
    return run_cli(*args, environment=env)


def test_validate_shipped_table_exits_0():
    result = _cli("table", "--validate", default_table_path())
    assert result.returncode == 0, result.stderr
    assert "valid (71 CUDA driver rows, 30 PyTorch releases" in result.stdout


def test_validate_broken_table_exits_2_with_one_line(tmp_path):
    data = copy.deepcopy(SHIPPED)
    _variant(data, "2.9", "cu128")["arch_list"].append("9.9")
    path = tmp_path / "org-table.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for args in (("table", "--validate", str(path)), ("check", "--json", "--table", str(path), "--driver", "580.65.06"),
                 ("recommend", "--image", "--table", str(path)), ("table", "--table", str(path))):
        result = _cli(*args)
        assert result.returncode == 2, args
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("cudadoctor: error: table ")
        assert "unknown compute capability 9.9" in lines[0]


def test_validate_not_json_exits_2(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("{ nope", encoding="utf-8")
    result = _cli("table", "--validate", str(path))
    assert result.returncode == 2
    assert result.stderr.strip() == f"cudadoctor: error: table {path}: not valid JSON (line 1, column 3)"


def test_a_newer_table_is_used_by_every_command(tmp_path):
    # An organisation ships a table with a release cudadoctor does not know yet.
    data = copy.deepcopy(SHIPPED)
    newest = copy.deepcopy(data["pytorch_releases"][-1])
    newest.update(version="2.99", full_version="2.99.0", released=None, variants_complete=True)
    data["pytorch_releases"].append(newest)
    path = tmp_path / "newer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert _cli("table", "--validate", str(path)).returncode == 0
    result = _cli("table", "--table", str(path), "--torch", "2.99", "--json")
    assert json.loads(result.stdout)["full_version"] == "2.99.0"
    result = _cli("recommend", "--image", "--family", "pytorch-cuda", "--format", "tag", "--table", str(path), "--driver", "595.45.04", "--gpu", "H100")
    assert result.stdout.strip() == "pytorch-cuda:v2.99-cu132"
    # PyTorch's own images of 2.99 are not in that table: the newest image that runs is 2.15's, the newest wheel 2.99's.
    result = _cli("recommend", "--image", "--format", "tag", "--table", str(path), "--driver", "595.45.04", "--gpu", "H100")
    assert result.stdout.strip() == "pytorch/pytorch:2.15.0-cuda13.2-cudnn9-runtime"
    result = _cli("recommend", "--wheel", "--format", "json", "--table", str(path), "--driver", "595.45.04", "--gpu", "H100")
    assert json.loads(result.stdout)["recommendation"]["torch"] == "2.99"


def test_default_target_is_the_newest_release(tmp_path):
    # The default target is the newest release with a verified variant, even when others of its variants are
    # unverified: the recommendation says which and how sure it is, instead of falling back to an older release.
    from cudadoctor.app.loader import load_table

    table = load_table()
    assert table.default_release is table.newest_release
    assert table.newest_release.unverified_variants  # 2.15 cu130 is on record, its arch list is not
    result = _cli("recommend", "--image", "--format", "json", "--driver", "595.45.04", "--gpu", "RTX 5090")
    rec = json.loads(result.stdout)["recommendation"]
    assert rec["torch"] == table.newest_release.version and rec["evidence"] == "binary"
    assert rec["unverified_variants"] == list(table.newest_release.unverified_variants)
    assert any("never offered" in note for note in rec["notes"])
    broken = copy.deepcopy(SHIPPED)
    broken["pytorch_releases"][0]["variants_complete"] = "yes"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    result = _cli("table", "--validate", str(path))
    assert result.returncode == 2 and "'variants_complete' must be true or false" in result.stderr


@pytest.mark.parametrize(
    "change,words",
    [
        (lambda v: v.update(platforms=["linux-riscv64"]), "unknown platform 'linux-riscv64'"),
        (lambda v: v.update(platforms=["windows", "windows"]), "a platform is listed twice"),
        (lambda v: v.update(first_patch="2.13.0"), "first_patch '2.13.0' must be 2.12.PATCH"),
        (lambda v: v.update(first_patch="2.12.7"), "first_patch 2.12.7 is newer than full_version 2.12.1"),
        (lambda v: v.update(arch_list=[]), "arch_list is empty"),
        (lambda v: v.update(evidence="inferred"), "inferred_from must name"),
        (lambda v: v.update(inferred_from="2.11 cu130"), "inferred_from must name"),
        (lambda v: v.update(evidence="rumour"), "evidence 'rumour' must be one of"),
        (lambda v: v["platform_builds"].update({"macos": v["platform_builds"]["linux-aarch64"]}), "platform must be one of"),
        (lambda v: v["platform_builds"]["linux-aarch64"].update(arch_list=["7.0"]), "outside what CUDA 13.0 can build"),
        (lambda v: v.update(platforms=["windows"]), "the variant is not listed for linux-aarch64"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_platform_and_patch_fields_are_validated(tmp_path, change, words):
    # docs/table.md, "Rules --validate enforces": platforms, first_patch, platform_builds, evidence levels.
    data = copy.deepcopy(SHIPPED)
    change(_variant(data, "2.12", "cu130"))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = _cli("table", "--validate", str(path))
    assert result.returncode == 2 and words in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
