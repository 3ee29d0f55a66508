"""NGC PyTorch container facts in the table: what the sources say, and the rules each entry meets.

The expected values are transcribed from the sources independently of data/compat_table.json:
- NVIDIA PyTorch Release Notes, PyTorch Release 25.12: "Release 25.12 is based on CUDA 13.1.0";
  "PyTorch container image version 25.12 is based on 2.10.0a0+b4e4ee81d3"; the driver section
  names no driver, it refers to NVIDIA's compatibility documentation.
- NVIDIA CUDA Toolkit release notes, Table 3: CUDA 13.1 GA needs Linux driver >= 590.44.01.
- NVIDIA CUDA Compatibility guide (r615), forward-compatibility matrix: the cuda-compat 13.1
  package is supported on branches 535, 570 and 580 (590 ships CUDA 13.1 itself).
- NVIDIA's Triton compatibility matrix (triton-inference-server/server docs/introduction/compatibility.md,
  2026 edition): a trtllm-python-py3 row names NVIDIA's PyTorch build by NGC month (Torch column,
  2.4.0a0+07cecf4168.nv24.5) and its CUDA; a vllm-python-py3 row names the same month's Triton container's
  CUDA. Where both agree (or a quotation of the PyTorch release notes agrees with a Triton row) the
  month's CUDA is ``secondary``: settled by NVIDIA's own material, labelled as such. Rows read:
  trtllm 24.07 nv24.5 12.4.1.003 / vllm 24.05 12.4.1; trtllm 24.08-24.10 nv24.7 12.5.1.007 / vllm 24.07
  12.5.1; trtllm 24.12 nv24.11 12.6.3 / vllm 24.11 12.6.3.001; trtllm 25.01-25.02 nv25.1 12.8.0.038 / vllm
  25.01 12.8.0.038; quoted 25.02 notes "CUDA 12.8.0.38" / vllm 25.02 12.8.0.038; trtllm 25.03-25.05 nv25.3
  (2.7.0a0+7c8ec84dab) 12.8.1.012 / vllm 25.03 12.8.1.012; trtllm 25.06-25.07 nv25.4 12.9.0.036 / vllm
  25.04 12.9.0.036; trtllm 25.08 nv25.5 12.9.0.043 / vllm 25.05 12.9.0.043; trtllm 25.11-26.02 nv25.10
  13.0.2.006 / vllm 25.10 13.0.2.006. They disagree for 24.10 (trtllm 24.11 nv24.10 12.6.3 with driver
  555.42.06 / vllm 24.10 12.6.2.004) and 25.06 (trtllm 25.09 nv25.6 12.9.1.010 / vllm 25.06 12.9.0.043).
- NVIDIA's TensorRT-LLM release notes (NVIDIA/TensorRT-LLM docs/source/release-notes.md), Infrastructure
  Changes: "The base Docker image for TensorRT-LLM is updated to nvcr.io/nvidia/pytorch:24.10-py3" with
  "The dependent CUDA version is updated to 12.6.2" (0.15.0); likewise 24.05/12.4.1 (0.11.0), 24.07/12.5.1
  (0.13.0), 24.11/12.6.3 (0.16.0), 25.01/12.8.0 (0.17.0), 25.03/12.8.1 (0.18.0). With the vllm 24.10 row,
  0.15.0 settles 24.10 at 12.6.2; 0.10.0 (24.03-py3, CUDA 12.4.0) with the trtllm 24.06 row (nv24.3,
  12.4.0.041) settles 24.03; 0.9.0 (24.02-py3, CUDA 12.3.2) alone leaves 24.02 unverified; 25.06
  (TensorRT-LLM 1.0 names the image but no CUDA) stays unverified.
Values seen only in the images' own metadata as quoted publicly, or in one source only, are unverified,
and must say so.

The sweep of the stored copies of NVIDIA's pages (2026-12-01) found no PyTorch release-notes page for
any month from 23.01 to 26.11 other than 25.12, and no copy of the Frameworks Support Matrix. SETTLED
below takes one row per month NVIDIA's material settles.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from cudadoctor.compat.ngc import DERIVED, RELEASE_NOTES, SECONDARY, UNVERIFIED
from cudadoctor.compat.table import TableError
from cudadoctor.compat.validate import parse_table
from cudadoctor.app.loader import default_table_path, load_table
from cudadoctor.model.versions import CudaVersion, DriverVersion

SHIPPED = json.loads(Path(default_table_path()).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def table():
    return load_table()


# One row per month NVIDIA's PyTorch release notes settle: (release, CUDA, PyTorch as printed, source key
# of the page, minimum driver, its level, its source, forward-compatibility branches, their level, their source).
# 25.12: "Release 25.12 is based on CUDA 13.1.0"; "PyTorch container image version 25.12 is based on
# 2.10.0a0+b4e4ee81d3"; the page prints no driver, so both driver facts are derived (Table 3; the matrix).
SETTLED = [
    ("25.12", "13.1.0", "2.10.0a0+b4e4ee81d3", "nvidia-ngc-pytorch-rn-25-12",
     "590.44.01", DERIVED, "nvidia-cuda-rn-table3", (535, 570, 580), DERIVED, "nvidia-cuda-compat-forward"),
]

# One row per month NVIDIA's other material settles (secondary): (release, CUDA, PyTorch, its level,
# Table 3's row for that exact CUDA, the matrix's branches whose cuda-compat packages cover it).
TRITON = "nvidia-triton-compat-matrix-months"
SECONDARY_MONTHS = [
    ("24.03", "12.4.0", "2.3.0a0+40ec155e58", SECONDARY, "550.54.14", (535,)),  # CUDA: TensorRT-LLM 0.10.0
    ("24.05", "12.4.1", "2.4.0a0+07cecf4168", SECONDARY, "550.54.15", (535,)),
    ("24.07", "12.5.1", "2.4.0a0+3bcc3cddb5", SECONDARY, "555.42.06", (535,)),
    ("24.10", "12.6.2", "2.5.0a0+e000cf0ad9", SECONDARY, "560.35.03", (535,)),  # CUDA: TensorRT-LLM 0.15.0
    ("24.11", "12.6.3", "2.6.0a0+df5bbc09d1", SECONDARY, "560.35.05", (535,)),
    ("25.01", "12.8.0", "2.6.0a0+ecf3bae40a", SECONDARY, "570.26", (535,)),
    ("25.03", "12.8.1", "2.7.0a0+7c8ec84dab", SECONDARY, "570.124.06", (535,)),
    ("25.04", "12.9.0", "2.7.0a0+79aa17489c", SECONDARY, "575.51.03", (535, 570)),
    ("25.05", "12.9.0", "2.8.0a0+5228986c39", SECONDARY, "575.51.03", (535, 570)),
    ("25.10", "13.0.2", "2.9.0a0+145a3a7bda", SECONDARY, "580.95.05", (535, 570)),
]


@pytest.mark.parametrize("release, cuda, pytorch, torch_level, driver, branches", SECONDARY_MONTHS,
                         ids=[row[0] for row in SECONDARY_MONTHS])
def test_months_nvidias_other_material_settles_are_secondary(table, release, cuda, pytorch, torch_level, driver, branches):
    rel = table.ngc_release(release)
    assert rel.settled and rel.evidence_label == SECONDARY and rel.source == TRITON
    assert rel.cuda == CudaVersion.parse(cuda) and rel.evidence_of("cuda") == SECONDARY
    assert rel.pytorch == pytorch and rel.evidence_of("pytorch") == torch_level
    assert rel.min_driver == DriverVersion.parse(driver)  # Table 3's row for that exact CUDA
    assert rel.evidence_of("min_driver") == DERIVED and rel.forward_compat_branches == branches
    assert "Triton" in rel.note and table.cite(TRITON).startswith("NVIDIA Triton Inference Server User Guide")
    if release in ("24.05", "24.07", "24.11", "25.01", "25.03"):  # NVIDIA's TensorRT-LLM release notes agree
        assert f"pytorch:{release}-py3" in rel.note and f"updated to {cuda}" in rel.note


@pytest.mark.parametrize(
    "release, cuda, pytorch, page, driver, driver_level, driver_source, branches, branch_level, branch_source",
    SETTLED, ids=[row[0] for row in SETTLED],
)
def test_settled_months_as_their_release_notes_print_them(
    table, release, cuda, pytorch, page, driver, driver_level, driver_source, branches, branch_level, branch_source
):
    rel = table.ngc_release(release)
    assert rel.settled and rel.source == page
    assert rel.cuda == CudaVersion.parse(cuda) and rel.evidence_of("cuda") == RELEASE_NOTES
    assert rel.pytorch == pytorch and rel.evidence_of("pytorch") == RELEASE_NOTES
    assert table.cite(rel.source).startswith(f"NVIDIA PyTorch Release Notes, PyTorch Release {release}")
    assert rel.min_driver == DriverVersion.parse(driver) and rel.evidence_of("min_driver") == driver_level
    assert rel.source_of("min_driver") == driver_source
    assert rel.forward_compat_branches == branches and rel.evidence_of("forward_compat_branches") == branch_level
    assert rel.source_of("forward_compat_branches") == branch_source


def test_only_the_months_a_page_settles_are_settled(table):
    settled = sorted([row[0] for row in SETTLED] + [row[0] for row in SECONDARY_MONTHS])
    assert [r.release for r in table.ngc_releases if r.settled] == settled


def test_release_25_12_is_pytorch_2_10(table):
    assert table.ngc_release("25.12").torch_minor == "2.10"


# (release, CUDA, PyTorch) as the images' metadata was quoted: recorded, but unverified.
# Triton matrix rows (Torch version column, ".nvYY.M" dropped): 24.07 2.4.0a0+3bcc3cddb5.nv24.7, 24.10
# 2.5.0a0+e000cf0ad9.nv24.10, 24.11 2.6.0a0+df5bbc09d1.nv24.11, 25.01 2.6.0a0+ecf3bae40a.nv25.1, 25.04
# 2.7.0a0+79aa17489c.nv25.4, 25.05 and 25.06 2.8.0a0+5228986c39.nv25.5 / .nv25.6. The quoted 25.02 notes:
# CUDA 12.8.0.38, 2.7.0a0+6c54963f75, "NVIDIA Driver release 570 or later"; the quoted 25.10 notes print
# 2.9.0a0+145a3a7bda (the build history's 145a3a7 is the same commit, shortened).
QUOTED = [
    ("23.02", None, None),  # nothing read settles it: recorded, empty
    ("23.10", "12.2.2", "2.1.0a0+32f93b1"),
    ("24.02", "12.3.2", None),  # TensorRT-LLM 0.9.0's notes only
    ("24.06", "12.5.0", None),  # one Triton row only
    ("25.06", "12.9.1", "2.8.0a0+5228986c39"),  # the Triton rows disagree
    ("25.11", "13.0.2", None),
    ("26.07", "13.3.1", "2.13.0a0+9186a08"),
]


@pytest.mark.parametrize("release, cuda, pytorch", QUOTED)
def test_quoted_values_are_recorded_as_unverified(table, release, cuda, pytorch):
    rel = table.ngc_release(release)
    assert (str(rel.cuda) if rel.cuda else None, rel.pytorch) == (cuda, pytorch)
    assert all(level == UNVERIFIED for _, level in rel.evidence)
    assert rel.note and not rel.settled and rel.evidence_label == UNVERIFIED


def test_a_quotation_and_one_sibling_row_do_not_settle_25_02(table):
    # A third party's quotation of the notes plus a single Triton row: the basis on which 24.06 is
    # unverified too, so 25.02 is recorded but never preferred over a settled month.
    rel = table.ngc_release("25.02")
    assert not rel.settled and rel.evidence_of("cuda") == UNVERIFIED
    assert rel.source_of("pytorch") == "ngc-pytorch-rn-quoted" and rel.evidence_of("pytorch") == UNVERIFIED
    assert "CUDA 12.8.0.38" in rel.note and "570 or later" in rel.note and "12.8.0.038" in rel.note


def test_the_months_where_the_triton_rows_disagree_name_both(table):
    assert "12.6.3" in table.ngc_release("24.10").note and "12.6.2.004" in table.ngc_release("24.10").note
    assert "12.9.1.010" in table.ngc_release("25.06").note and "12.9.0.043" in table.ngc_release("25.06").note


def test_24_10_is_settled_by_the_tensorrt_llm_release_notes_and_the_triton_row(table):
    rel = table.ngc_release("24.10")
    assert rel.source_of("cuda") == "nvidia-tensorrt-llm-release-notes" and rel.evidence_of("cuda") == SECONDARY
    assert "pytorch:24.10-py3" in rel.note and "updated to 12.6.2" in rel.note and "12.6.2.004" in rel.note
    assert table.cite("nvidia-tensorrt-llm-release-notes").startswith("NVIDIA TensorRT-LLM Release Notes")


def test_the_months_are_sorted(table):
    keys = [r.key for r in table.ngc_releases]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_the_23_10_arch_list_is_the_image_environments(table):
    assert table.ngc_release("23.10").arch_list == ("5.2", "6.0", "6.1", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "9.0+PTX")


def test_the_family_names_a_tag_per_month(table):
    family = table.ngc_family("ngc-pytorch")
    assert family is table.ngc_family(family.repository)
    assert family.release_in_tag("24.05-py3") == "24.05"
    assert family.release_in_tag("24.13-py3") is None and family.release_in_tag("24.05-py3-igpu") is None
    found = table.ngc_match(family.repository, "25.12-py3")
    assert found is not None and found[2] is table.ngc_release("25.12")
    month = table.ngc_match(family.repository, "23.01-py3")
    assert month is not None and month[1] == "23.01" and month[2] is None  # a month the table does not record
    assert table.family("ngc-pytorch") is None  # not a wheel family: nothing iterating those sees it


def _ngc(data, release):
    return next(r for r in data["ngc_pytorch_releases"] if r["release"] == release)


def _changed(change):
    data = copy.deepcopy(SHIPPED)
    change(data)
    return data


BROKEN = [
    ("bad month", lambda d: _ngc(d, "25.12").update(release="25.13"), "must be written YY.MM"),
    ("out of order", lambda d: d["ngc_pytorch_releases"].reverse(), "out of order"),
    ("unknown level", lambda d: _ngc(d, "25.12")["evidence"].update(cuda="blog"), "expected one of"),
    ("null needs unverified", lambda d: _ngc(d, "23.02")["evidence"].update(cuda=RELEASE_NOTES), "is null"),
    ("derived from unverified", lambda d: _ngc(d, "23.10").update(min_driver="535.104.05", evidence={**_ngc(d, "23.10")["evidence"], "min_driver": DERIVED}), "derived only from a settled CUDA"),
    ("secondary needs a note", lambda d: _ngc(d, "24.05").update(note=""), "needs a note"),
    ("derived must match Table 3", lambda d: _ngc(d, "25.12").update(min_driver="590.48.01"), "differs from cuda_releases"),
    ("derived must match the matrix", lambda d: _ngc(d, "25.12").update(forward_compat_branches=[535, 570]), "differ from the matrix"),
    ("unverified needs a note", lambda d: _ngc(d, "23.10").update(note=""), "needs a note"),
    ("printed driver off Table 3 needs a note", lambda d: _ngc(d, "25.12").update(
        min_driver="590.48.01", evidence={**_ngc(d, "25.12")["evidence"], "min_driver": RELEASE_NOTES}, note="printed"),
     "name 590.44.01 in the note"),
    ("printed branches off the matrix need a note", lambda d: _ngc(d, "25.12").update(
        forward_compat_branches=[470, 525, 535, 545], note="",
        evidence={**_ngc(d, "25.12")["evidence"], "forward_compat_branches": RELEASE_NOTES}),
     "say so in the note"),
    ("torch text", lambda d: _ngc(d, "25.12").update(pytorch="2.10-nightly"), "as the release notes print it"),
    ("arch words", lambda d: _ngc(d, "23.10").update(arch_list="sm_90"), "arch list word"),
    ("missing source", lambda d: _ngc(d, "25.12").update(source="nowhere"), "not defined under 'sources'"),
    ("family template", lambda d: d["image_families"][-1].update(tag_template="{torch}-py3"), "{release} once"),
    ("no ngc family", lambda d: d["image_families"].pop(), "no image family of kind"),
    ("family kind", lambda d: d["image_families"][-1].update(kind="helm"), "must be \"wheel\""),
]


@pytest.mark.parametrize("name, change, message", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_ngc_entries_fail_naming_the_rule(name, change, message):
    with pytest.raises(TableError, match=None) as caught:
        parse_table(_changed(change))
    assert message in str(caught.value)


def test_shipped_ngc_sources_are_at_the_end_and_defined():
    keys = list(SHIPPED["sources"])
    for rel in SHIPPED["ngc_pytorch_releases"]:
        assert rel["source"] in keys and all(v in keys for v in rel.get("sources", {}).values())


# What older pages print, as they print it: "requires NVIDIA Driver release 550 or later" (the branch) and
# "470.57 (or later R470), 525.85 (or later R525), 535.86 (or later R535), or 545.23 (or later R545)".
PRINTED = [
    ("the printed branch on Table 3's branch", {"min_driver": "590"}, ""),
    ("Table 3's own value", {"min_driver": "590.44.01"}, ""),
    ("a printed driver off Table 3, named in the note", {"min_driver": "590.48.01"}, "Table 3 gives 590.44.01"),
    ("end-of-life branches the page names", {"forward_compat_branches": [470, 525, 535, 545]}, "the matrix gives 535, 570, 580"),
]


@pytest.mark.parametrize("name, values, note", PRINTED, ids=[p[0] for p in PRINTED])
def test_printed_driver_values_are_kept_as_printed(name, values, note):
    def change(d):
        rel = _ngc(d, "25.12")
        rel.update(values)
        rel["evidence"].update({fact: RELEASE_NOTES for fact in values})
        rel["sources"] = {k: v for k, v in rel["sources"].items() if k not in values}
        rel["note"] = note
    parsed = parse_table(_changed(change))
    rel = next(r for r in parsed.ngc_releases if r.release == "25.12")
    if "min_driver" in values:
        assert rel.min_driver == DriverVersion.parse(values["min_driver"]) and rel.evidence_of("min_driver") == RELEASE_NOTES
        assert rel.source_of("min_driver") == "nvidia-ngc-pytorch-rn-25-12"
    else:
        assert rel.forward_compat_branches == tuple(values["forward_compat_branches"])


@pytest.mark.parametrize("fact, value", [("cuda", 5), ("cuda", 12.4), ("min_driver", 550)])
def test_an_ngc_month_whose_versions_are_json_numbers_is_refused(fact: str, value: object) -> None:
    import json

    from cudadoctor.compat.table import TableError
    from cudadoctor.compat.validate import parse_table
    from helpers import REPO_ROOT

    data = json.loads((REPO_ROOT / "data" / "compat_table.json").read_text())
    month = next(m for m in data["ngc_pytorch_releases"] if m.get(fact) is not None)
    month[fact] = value
    with pytest.raises(TableError, match=f"{fact} .* must be a string"):
        parse_table(data, "table.json")
