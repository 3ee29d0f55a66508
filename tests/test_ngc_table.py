"""NGC PyTorch container facts in the table: what the sources say, and the rules each entry meets.

The expected values are transcribed from the sources independently of data/compat_table.json:
- NVIDIA PyTorch Release Notes, PyTorch Release 25.12: "Release 25.12 is based on CUDA 13.1.0";
  "PyTorch container image version 25.12 is based on 2.10.0a0+b4e4ee81d3"; the driver section
  names no driver, it refers to NVIDIA's compatibility documentation.
- NVIDIA CUDA Toolkit release notes, Table 3: CUDA 13.1 GA needs Linux driver >= 590.44.01.
- NVIDIA CUDA Compatibility guide (r615), forward-compatibility matrix: the cuda-compat 13.1
  package is supported on branches 535, 570 and 580 (590 ships CUDA 13.1 itself).
Values seen only in the images' own metadata as quoted publicly are unverified, and must say so.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from cudadoctor.compat.ngc import DERIVED, RELEASE_NOTES, UNVERIFIED
from cudadoctor.compat.table import TableError
from cudadoctor.compat.validate import parse_table
from cudadoctor.loader import default_table_path, load_table
from cudadoctor.model.versions import CudaVersion, DriverVersion

SHIPPED = json.loads(Path(default_table_path()).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def table():
    return load_table()


def test_release_25_12_as_its_release_notes_print_it(table):
    rel = table.ngc_release("25.12")
    assert rel.cuda == CudaVersion.parse("13.1.0") and rel.evidence_of("cuda") == RELEASE_NOTES
    assert rel.pytorch == "2.10.0a0+b4e4ee81d3" and rel.evidence_of("pytorch") == RELEASE_NOTES
    assert rel.torch_minor == "2.10"
    assert table.cite(rel.source).startswith("NVIDIA PyTorch Release Notes, PyTorch Release 25.12")
    # Derived from Table 3 and the forward-compatibility matrix, each citing its own source.
    assert rel.min_driver == DriverVersion.parse("590.44.01") and rel.evidence_of("min_driver") == DERIVED
    assert rel.source_of("min_driver") == "nvidia-cuda-rn-table3"
    assert rel.forward_compat_branches == (535, 570, 580) and rel.evidence_of("forward_compat_branches") == DERIVED
    assert rel.source_of("forward_compat_branches") == "nvidia-cuda-compat-forward"


# (release, CUDA, PyTorch) as the images' metadata was quoted: recorded, but unverified.
QUOTED = [
    ("23.10", "12.2.2", "2.1.0a0+32f93b1"),
    ("24.03", None, "2.3.0a0+40ec155e58"),
    ("24.05", None, "2.4.0a0+07cecf4168"),
    ("25.10", "13.0.2", "2.9.0a0+145a3a7"),
    ("25.11", "13.0.2", None),
    ("26.07", "13.3.1", "2.13.0a0+9186a08"),
]


@pytest.mark.parametrize("release, cuda, pytorch", QUOTED)
def test_quoted_values_are_recorded_as_unverified(table, release, cuda, pytorch):
    rel = table.ngc_release(release)
    assert (str(rel.cuda) if rel.cuda else None, rel.pytorch) == (cuda, pytorch)
    assert all(level == UNVERIFIED for _, level in rel.evidence)
    assert rel.note and not rel.settled


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
    ("null needs unverified", lambda d: _ngc(d, "24.05")["evidence"].update(cuda=RELEASE_NOTES), "is null"),
    ("derived from unverified", lambda d: _ngc(d, "23.10").update(min_driver="535.104.05", evidence={**_ngc(d, "23.10")["evidence"], "min_driver": DERIVED}), "derived only from a CUDA"),
    ("derived must match Table 3", lambda d: _ngc(d, "25.12").update(min_driver="590.48.01"), "differs from cuda_releases"),
    ("derived must match the matrix", lambda d: _ngc(d, "25.12").update(forward_compat_branches=[535, 570]), "differ from the matrix"),
    ("unverified needs a note", lambda d: _ngc(d, "23.10").update(note=""), "needs a note"),
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
