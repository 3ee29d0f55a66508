"""The shipped table states what its sources say. Every case names its source (see docs/table.md).

These lists are transcribed from the sources independently of data/compat_table.json, so an edit
of the table that disagrees with a source fails here.
"""

from __future__ import annotations

import pytest

from cudadoctor.app.loader import load_table
from cudadoctor.model.versions import ComputeCapability as CC
from cudadoctor.model.versions import CudaVersion, DriverVersion


@pytest.fixture(scope="module")
def table():
    return load_table()


# --- Driver <-> CUDA -----------------------------------------------------------------------------
# Source: NVIDIA CUDA Toolkit 13.4 Update 1 Release Notes, 2.2 CUDA Driver, "Older CUDA versions (12.9
# and earlier)" (read through a stored copy of NVIDIA's page): the rows before 10.0, which the 13.2 Update 2
# edition no longer prints. NVIDIA prints 9.1 as 390.46 / 391.29 (the 9.1 runfile bundles 387.26).
TABLE3_OLD = [
    ("8.0.44", "367.48", "369.30"),
    ("8.0.61", "375.26", "376.51"),  # 8.0 GA2
    ("9.0.76", "384.81", "385.54"),
    ("9.1.85", "390.46", "391.29"),
    ("9.2.88", "396.26", "397.44"),
    ("9.2.148", "396.37", "398.26"),  # 9.2 Update 1
]


@pytest.mark.parametrize("version,linux,windows", TABLE3_OLD, ids=[f"nvidia-table3-13.4.2-cuda-{v}" for v, _, _ in TABLE3_OLD])
def test_every_table3_row_before_cuda_10(table, version, linux, windows):
    rows = [r for r in table.cuda_releases if r.version == CudaVersion.parse(version)]
    assert len(rows) == 1, f"CUDA {version} must have exactly one row"
    row = rows[0]
    assert (row.min_driver_linux.raw, row.min_driver_windows.raw) == (linux, windows)
    assert row.source == "nvidia-cuda-rn-13.4.2" and row.evidence == "release-notes"


# Source: NVIDIA CUDA Toolkit 13.2 Update 2 Release Notes, Table 3 "CUDA Toolkit and Corresponding
# Driver Versions" (version, Linux x86_64 >=, Windows >=; None where NVIDIA prints N/A).
TABLE3 = [
    ("10.0.130", "410.48", "411.31"),
    ("10.1.105", "418.39", "418.96"),
    ("10.2.89", "440.33", "441.22"),
    ("11.0.1", "450.36.06", "451.22"),
    ("11.0.2", "450.51.05", "451.48"),
    ("11.0.3", "450.51.06", "451.82"),
    ("11.1.0", "455.23", "456.38"),
    ("11.1.1", "455.32", "456.81"),
    ("11.2.0", "460.27.03", "460.82"),
    ("11.2.1", "460.32.03", "461.09"),
    ("11.2.2", "460.32.03", "461.33"),
    ("11.3.0", "465.19.01", "465.89"),
    ("11.3.1", "465.19.01", "465.89"),
    ("11.4.0", "470.42.01", "471.11"),
    ("11.4.1", "470.57.02", "471.41"),
    ("11.4.2", "470.57.02", "471.41"),
    ("11.4.3", "470.82.01", "472.50"),
    ("11.4.4", "470.82.01", "472.50"),
    ("11.5.0", "495.29.05", "496.04"),
    ("11.5.1", "495.29.05", "496.13"),
    ("11.5.2", "495.29.05", "496.13"),
    ("11.6.0", "510.39.01", "511.23"),
    ("11.6.1", "510.47.03", "511.65"),
    ("11.6.2", "510.47.03", "511.65"),
    ("11.7.0", "515.43.04", "516.01"),
    ("11.7.1", "515.48.07", "516.31"),
    ("11.8.0", "520.61.05", "520.06"),
    ("12.0.0", "525.60.13", "527.41"),
    ("12.0.1", "525.85.12", "528.33"),
    ("12.1.0", "530.30.02", "531.14"),
    ("12.1.1", "530.30.02", "531.14"),
    ("12.2.0", "535.54.03", "536.25"),
    ("12.2.1", "535.86.09", "536.67"),
    ("12.2.2", "535.104.05", "537.13"),
    ("12.3.0", "545.23.06", "545.84"),
    ("12.3.1", "545.23.08", "546.12"),
    ("12.4.0", "550.54.14", "551.61"),
    ("12.4.1", "550.54.15", "551.78"),
    ("12.5.0", "555.42.02", "555.85"),
    ("12.5.1", "555.42.06", "555.85"),
    ("12.6.0", "560.28.03", "560.76"),
    ("12.6.1", "560.35.03", "560.94"),
    ("12.6.2", "560.35.03", "560.94"),
    ("12.6.3", "560.35.05", "561.17"),
    ("12.8.0", "570.26", "570.65"),
    ("12.8.1", "570.124.06", "572.61"),
    ("12.9.0", "575.51.03", "576.02"),
    ("12.9.1", "575.57.08", "576.57"),
    ("13.0.0", "580.65.06", None),
    ("13.0.1", "580.82.07", None),
    ("13.0.2", "580.95.05", None),
    ("13.1.0", "590.44.01", None),
    ("13.1.1", "590.48.01", None),
    ("13.2.0", "595.45.04", None),
    ("13.2.1", "595.58.03", None),
    ("13.2.2", "595.71.05", None),
]


@pytest.mark.parametrize("version,linux,windows", TABLE3, ids=[f"nvidia-table3-cuda-{v}" for v, _, _ in TABLE3])
def test_every_table3_row(table, version, linux, windows):
    rows = [r for r in table.cuda_releases if r.version == CudaVersion.parse(version)]
    assert len(rows) == 1, f"CUDA {version} must have exactly one row"
    row = rows[0]
    assert row.min_driver_linux.raw == linux
    assert (row.min_driver_windows.raw if row.min_driver_windows else None) == windows
    assert row.source == "nvidia-cuda-rn-table3"


# Source: NVIDIA's CUDA redistributable manifest redistrib_13.3.0.json (cuda_compat 610.43.02 for
# cuda13.3) and NVIDIA's CUDA repository, which publishes cuda-drivers-610.43.02 with cuda-13-3-13.3.0.
# Table 3 itself was not read for these rows (the stored copy of the 13.3+ notes stops at their opening).
# For every 13.x row above (13.0 GA to 13.2 Update 2) the cuda-compat / cuda-drivers version NVIDIA
# publishes with the release equals Table 3's Linux value.
REDIST_ROWS = [
    ("13.3.0", "610.43.02", None, "nvidia-cuda-redist-13.3.0"),
    # NVIDIA's R620 driver manifest redistrib_620.70.06.json: cuda_variant 13.5, cuda_compat 620.70.06.
    ("13.5.0", "620.70.06", None, "nvidia-driver-redist-620"),
]


@pytest.mark.parametrize("version,linux,windows,source", REDIST_ROWS, ids=[f"nvidia-redist-cuda-{v}" for v, _, _, _ in REDIST_ROWS])
def test_every_redist_row(table, version, linux, windows, source):
    rows = [r for r in table.cuda_releases if r.version == CudaVersion.parse(version)]
    assert len(rows) == 1, f"CUDA {version} must have exactly one row"
    row = rows[0]
    assert row.min_driver_linux.raw == linux and row.min_driver_windows is None
    assert row.evidence == "redist-manifest" and row.source == source
    assert "Table 3" in row.note  # the row says that Table 3 was not read


# Source: NVIDIA's local installer file names, cuda_<version>_<driver>_linux.run (and _windows.exe), as
# quoted publicly: updates that no edition of Table 3 read here prints. The runfile bundles the driver.
RUNFILE_ROWS = [
    ("12.8.2", "570.211.01", "572.61"),  # cuda_12.8.2_570.211.01_linux.run, cuda_12.8.2_572.61_windows.exe
    ("12.9.2", "575.57.08", "576.57"),  # cuda_12.9.2_575.57.08_linux.run, cuda_12.9.2_576.57_windows.exe
    ("13.0.3", "580.126.20", None),  # cuda_13.0.3_580.126.20_linux.run
    ("13.1.2", "590.48.01", None),  # cuda_13.1.2_590.48.01_linux.run
    ("13.3.1", "610.43.02", None),  # cuda_13.3.1_610.43.02_linux.run
]


@pytest.mark.parametrize("version,linux,windows", RUNFILE_ROWS, ids=[f"nvidia-runfile-cuda-{v}" for v, _, _ in RUNFILE_ROWS])
def test_every_runfile_row(table, version, linux, windows):
    rows = [r for r in table.cuda_releases if r.version == CudaVersion.parse(version)]
    assert len(rows) == 1, f"CUDA {version} must have exactly one row"
    row = rows[0]
    assert row.min_driver_linux.raw == linux
    assert (row.min_driver_windows.raw if row.min_driver_windows else None) == windows
    assert row.evidence == "runfile-name" and row.source == "nvidia-cuda-runfile-names"
    assert "Not a Table 3 row" in row.note


# Source: NVIDIA CUDA Toolkit 13.4 Update 1 Release Notes, 2.2 CUDA Driver: "CUDA 13.4 | R615"; "Update
# releases within a CUDA minor version use the same driver branch"; 13.4 GA is versioned 13.4.1. NVIDIA
# prints the branch only, so the row holds the branch.
BRANCH_ROWS = [("13.4.1", "615"), ("13.4.2", "615")]


def test_cuda_13_4_rows_hold_the_r615_branch_nvidia_prints(table):
    for version, branch in BRANCH_ROWS:
        (row,) = [r for r in table.cuda_releases if r.version == CudaVersion.parse(version)]
        assert (row.min_driver_linux.raw, row.min_driver_windows) == (branch, None)
        assert row.evidence == "driver-branch" and row.source == "nvidia-cuda-rn-13.4.2"
    assert table.min_driver_full(CudaVersion.parse("13.4")).min_driver_linux.raw == "615"
    assert table.cuda_supported_by_driver(DriverVersion.parse("615.71.09")) == CudaVersion.parse("13.4")
    assert table.cuda_supported_by_driver(DriverVersion.parse("610.43.02")) == CudaVersion.parse("13.3")
    # An update's runfile row never lowers its minor's full-support driver: 12.8 stays at 12.8 GA's 570.26.
    assert table.min_driver_full(CudaVersion.parse("12.8")).min_driver_linux.raw == "570.26"
    assert table.min_driver_full(CudaVersion.parse("9.2")).min_driver_linux.raw == "396.26"


def test_table3_has_no_unverified_rows(table):
    # Rows no NVIDIA publication (or NVIDIA's own installer names or manifests) settles here stay out.
    # There never was a CUDA 12.7 toolkit.
    versions = {str(r.version) for r in table.cuda_releases}
    settled = TABLE3 + TABLE3_OLD + [row[:3] for row in REDIST_ROWS] + RUNFILE_ROWS
    assert versions == {v for v, _, _ in settled} | {v for v, _ in BRANCH_ROWS}
    assert all(r.evidence == "release-notes" for r in table.cuda_releases if str(r.version) in {v for v, _, _ in TABLE3})
    assert table.min_driver_full(CudaVersion.parse("12.7")) is None
    assert table.min_driver_full(CudaVersion.parse("13.3")).min_driver_linux.raw == "610.43.02"
    assert table.min_driver_full(CudaVersion.parse("13.5")).min_driver_linux.raw == "620.70.06"
    assert table.min_driver_full(CudaVersion.parse("13.6")) is None
    assert table.cuda_supported_by_driver(DriverVersion.parse("620.70.06")) == CudaVersion.parse("13.5")
    assert table.cuda_supported_by_driver(DriverVersion.parse("610.43.02")) == CudaVersion.parse("13.3")


# Source: the same notes, Table 2, and the CUDA Compatibility guide, "Minor Version Compatibility".
@pytest.mark.parametrize(
    "major,linux,windows,ceiling",
    [
        (11, "450.80.02", "452.39", "525"),  # ">= 450"; 450.80.02 / 452.39 across the 11.x family
        (12, "525.60.13", "527.41", "580"),  # ">= 525"; 12.0 GA packaged 525.60.13 / 527.41
        (13, "580.65.06", "580", None),  # ">= 580"; 13.0 GA packaged 580.65.06
    ],
    ids=["nvidia-table2-11x", "nvidia-table2-12x", "nvidia-table2-13x"],
)
def test_minor_version_floors(table, major, linux, windows, ceiling):
    row = table.minor_compat_floor(major)
    assert row.min_driver_linux.raw == linux
    assert row.min_driver_windows.raw == windows
    assert (row.max_driver_exclusive.raw if row.max_driver_exclusive else None) == ceiling
    assert any("PTX" in text for text in row.gives_up)


def test_cuda_12_1_does_not_need_r535(table):
    # Wrong claim in the wild: "CUDA 12.1 needs an R535 driver". Table 3: 12.1 GA and Update 1 were
    # packaged with 530.30.02; Table 2: any 12.x runs (minor-version compatibility) from 525.
    assert table.min_driver_full(CudaVersion.parse("12.1")).min_driver_linux.raw == "530.30.02"
    assert table.minor_compat_floor(12).min_driver_linux.raw == "525.60.13"
    assert table.cuda_supported_by_driver(DriverVersion.parse("530.30.02")) == CudaVersion.parse("12.1")
    assert table.min_driver_full(CudaVersion.parse("12.2")).min_driver_linux.raw == "535.54.03"  # R535 is 12.2's


def test_release_candidate_rows_do_not_set_the_minimum(table):
    # Table 3 lists "CUDA 11.0.1 RC" (450.36.06) before 11.0 GA (11.0.2, 450.51.05).
    assert table.min_driver_full(CudaVersion.parse("11.0")).min_driver_linux.raw == "450.51.05"


# --- Toolkit <-> compute capability --------------------------------------------------------------
# Sources: CUDA 13.2 U2 release notes "Deprecated Architectures" and cuFFT "Deprecated Functionality"
# (drops); NVIDIA's PTX ISA release history (additions).
@pytest.mark.parametrize(
    "cuda,low,high",
    [
        ("8.0", "3.0", "6.2"),  # sm_60-62 (Pascal) added; 8.0 also builds Fermi, which the table does not name
        ("9.0", "3.0", "7.0"),  # sm_70 (Volta) added, Fermi removed
        ("9.1", "3.0", "7.2"),  # sm_72 added
        ("9.2", "3.0", "7.2"),
        ("10.2", "3.0", "7.5"),  # last toolkit with sm_30
        ("11.0", "3.5", "8.0"),  # SM30 removed; A100 added
        ("11.8", "3.5", "9.0"),  # last with Kepler sm_35/37; Ada and Hopper added
        ("12.0", "5.0", "9.0"),  # SM35/SM37 removed
        ("12.8", "5.0", "12.0"),  # Blackwell added
        ("12.9", "5.0", "12.1"),
        ("13.0", "7.5", "12.1"),  # Maxwell, Pascal, Volta removed
        ("13.2", "7.5", "12.1"),
        # nvrtcGetSupportedArchs() of NVIDIA's NVRTC wheels 13.3.33, 13.4.92, 13.5.37: sm_75..sm_121
        # (13.4 and 13.5 add sm_107 inside that range).
        ("13.3", "7.5", "12.1"),
        ("13.4", "7.5", "12.1"),
        ("13.5", "7.5", "12.1"),
    ],
    ids=lambda v: str(v),
)
def test_toolkit_ranges(table, cuda, low, high):
    row = table.toolkit_architectures_for(CudaVersion.parse(cuda))
    assert (str(row.min_cc), str(row.max_cc)) == (low, high)


def test_toolkit_rows_after_13_2_rest_on_nvrtc():
    table = load_table()
    for cuda in ("13.3", "13.4", "13.5"):
        row = table.toolkit_architectures_for(CudaVersion.parse(cuda))
        assert str(row.cuda) == cuda and row.source == "nvidia-nvrtc-supported-archs"
    # sm_107 (13.4 on) names no GPU any NVIDIA page read here settles: not a known compute capability.
    assert table.cc_info(CC.parse("10.7")) is None


# --- PyTorch releases --------------------------------------------------------------------------
# (release, variants, default wheel, source of the variant list)
RELEASES = [
    # 1.x: the wheel commands of the previous-versions page (v1.0.0-v1.13.1), public install commands for the
    # variants it leaves out (1.3 cu100, 1.10 cu113, 1.11 cu115), torch/version.py of each PyPI default wheel.
    # cu80 (1.0.0 only) is not recorded: the install command names 1.0.1, which has no cu80 wheel.
    ("1.0", ["cu90", "cu100"], "cu90", "previous-versions page (cu90, cu100); the 1.0.1 PyPI wheel is cu90"),
    ("1.1", ["cu90", "cu100"], "cu90", "previous-versions page (cu90, cu100); the 1.1.0 PyPI wheel is cu90"),
    ("1.2", ["cu92", "cu100"], "cu100", "previous-versions page (cu92, cu100); 1.2.0 PyPI wheel: cuda 10.0.130"),
    ("1.3", ["cu92", "cu100", "cu101"], "cu101", "install commands (cu92, cu100); 1.3.1 PyPI wheel: cuda 10.1.243"),
    ("1.4", ["cu92", "cu101"], "cu101", "previous-versions page (cu92, cu101); 1.4.0 PyPI wheel: cuda 10.1"),
    ("1.5", ["cu92", "cu101", "cu102"], "cu102", "previous-versions page (cu92, cu101, cu102); 1.5.1 PyPI wheel: cuda 10.2"),
    ("1.6", ["cu92", "cu101", "cu102"], "cu102", "previous-versions page (cu92, cu101, cu102); 1.6.0 PyPI wheel: cuda 10.2"),
    ("1.7", ["cu92", "cu101", "cu102", "cu110"], "cu102", "previous-versions page (cu92 too); 1.7.1 PyPI wheel: cuda 10.2"),
    ("1.8", ["cu101", "cu102", "cu111"], "cu102", "previous-versions page (cu101 from 1.8.1); 1.8.1+cu102 on PyPI"),
    ("1.9", ["cu102", "cu111"], "cu102", "previous-versions page; 1.9.1+cu102 on PyPI"),
    ("1.10", ["cu102", "cu111", "cu113"], "cu102", "previous-versions page; install commands (cu113); 1.10.2+cu102 on PyPI"),
    ("1.11", ["cu102", "cu113", "cu115"], "cu102", "previous-versions page; install commands (cu115); 1.11.0+cu102 on PyPI"),
    ("1.12", ["cu102", "cu113", "cu116"], "cu102", "previous-versions page; 1.12.1+cu102 on PyPI"),
    ("1.13", ["cu116", "cu117"], "cu117", "previous-versions page; RELEASE.md; 1.13.1+cu117 on PyPI"),
    ("2.0", ["cu117", "cu118"], "cu117", "pytorch/builder release/2.0 manywheel/build_cuda.sh; wheel METADATA"),
    ("2.1", ["cu118", "cu121"], "cu121", "pytorch/builder release/2.1; RELEASE.md matrix"),
    ("2.2", ["cu118", "cu121"], "cu121", "pytorch/builder release/2.2; RELEASE.md matrix"),
    ("2.3", ["cu118", "cu121"], "cu121", "pytorch/builder release/2.3; RELEASE.md matrix"),
    ("2.4", ["cu118", "cu121", "cu124"], "cu121", "pytorch/builder release/2.4; wheel METADATA"),
    ("2.5", ["cu118", "cu121", "cu124"], "cu124", "pytorch/builder release/2.5; 2.5.1 binary scan"),
    ("2.6", ["cu118", "cu124", "cu126"], "cu124", "generate_binary_build_matrix.py (2.6/2.7); third-party table"),
    ("2.7", ["cu118", "cu126", "cu128"], "cu126", "generate_binary_build_matrix.py (2.6/2.7); third-party table"),
    ("2.8", ["cu126", "cu128", "cu129"], "cu128", "pytorch .ci/manywheel/build_cuda.sh release/2.8; 2.8.0 binary scan"),
    ("2.9", ["cu126", "cu128", "cu129", "cu130"], "cu128", "generate_binary_build_matrix.py release/2.9; third-party (cu129)"),
    ("2.10", ["cu126", "cu128", "cu129", "cu130"], "cu128", "build_cuda.sh 2.10 era; wheel METADATA"),
    ("2.11", ["cu126", "cu128", "cu129", "cu130"], "cu130", "RELEASE.md (PR 175253); 2.11.0 binary scan (default)"),
    ("2.12", ["cu126", "cu129", "cu130", "cu132"], "cu130", "RELEASE.md (PR 182849); issue 185269 (cu129 in 2.12.1); 2.12.0/2.12.1 binary scans"),
    ("2.13", ["cu126", "cu129", "cu130", "cu132"], "cu130", "RELEASE.md (PR 187075); PR 188443 (cu129 built on release/2.13); 2.13.0 binary scan"),
    ("2.14", ["cu126", "cu130", "cu132"], "cu130", "RELEASE.md (PRs 194367, 197555); 2.14.0/2.14.1 binary scans"),
    ("2.15", ["cu130", "cu132"], "cu132", "RFC issue 190385 (12.6 removed, 13.0 kept: unverified); 2.15.0 binary scan"),
]


@pytest.mark.parametrize("version,variants,default,source", RELEASES, ids=[f"torch-{r[0]}" for r in RELEASES])
def test_release_variants_and_default_wheel(table, version, variants, default, source):
    release = table.release(version)
    assert [v.name for v in release.variants] == variants, source
    assert release.default_variant == default, source


def test_pytorch_2_9_ships_no_cu118_or_cu121(table):
    # Wrong claim in the wild. Source: generate_binary_build_matrix.py on release/2.9 (CUDA 12.6/12.8/13.0).
    names = {v.name for v in table.release("2.9").variants}
    assert not names & {"cu118", "cu121", "cu124"}
    last = {name: max(r.key for r in table.pytorch_releases if r.variant(name)) for name in ("cu118", "cu121", "cu124")}
    assert last == {"cu118": (2, 7), "cu121": (2, 5), "cu124": (2, 6)}


def _releases_with(table, predicate):
    return [(r.version, v.name) for r in table.pytorch_releases for v in r.variants if predicate(v)]


def test_kepler_is_last_in_cu118(table):
    # Source: pytorch/builder manywheel/build.sh and build_cuda.sh (3.7 in every 1.x list from 1.3.1 on; release/2.0 to
    # release/2.5: cu117/cu118 append 3.7); CUDA 12.0 removed SM35/SM37. The sm_37 that a third-party table gives
    # 2.6/2.7 cu118 is not taken over: PyTorch's 2.7-cycle runbook lists Kepler(3.7) for 11.8.0, but no release/2.6 or
    # release/2.7 build script or cu118 wheel was read, so a K80 gets no 2.6 or 2.7 build until one is.
    with_kepler = _releases_with(table, lambda v: CC(3, 7) in v.arch_list)
    assert {name for _, name in with_kepler} == {"cu92", "cu100", "cu101", "cu102", "cu110", "cu111", "cu113", "cu115", "cu116", "cu117", "cu118"}
    assert max(table.release(version).key for version, _ in with_kepler) == (2, 5)
    for version in ("2.6", "2.7"):
        assert table.release(version).variant("cu118").coverage(CC(3, 7)) is None, version
    assert table.release("1.13").variant("cu117").coverage(CC(3, 7)) == "sass"
    assert all(v.coverage(CC(3, 7)) is None for r in table.pytorch_releases for v in r.variants if v.cuda.major >= 12)


def test_maxwell_and_pascal_absent_from_cu128_and_later(table):
    # Source: 2.8.0+cu128 binary scan (sm_70..sm_120); pytorch build_cuda.sh comment (sm_50-sm_60 removed for 12.8/12.9).
    for version, name in _releases_with(table, lambda v: v.cuda >= CudaVersion.parse("12.8")):
        variant = table.release(version).variant(name)
        for cc in (CC(5, 0), CC(5, 2), CC(6, 0), CC(6, 1)):
            assert variant.coverage(cc) is None, (version, name, cc)
    assert table.release("2.9").variant("cu126").coverage(CC(6, 1)) == "sass"  # sm_61 runs sm_60 code


def test_volta_exits(table):
    # Source: 2.8.0 cu128 binary keeps sm_70; CUDA 13.0 removed Volta; third-party table: 2.11 drops sm_70 from cu128/cu129.
    assert table.release("2.8").variant("cu128").coverage(CC(7, 0)) == "sass"
    assert table.release("2.10").variant("cu129").coverage(CC(7, 0)) == "sass"
    assert table.release("2.11").variant("cu128").coverage(CC(7, 0)) is None
    assert all(v.coverage(CC(7, 0)) is None for r in table.pytorch_releases for v in r.variants if v.cuda.major >= 13)


def test_blackwell_enters_with_cu128(table):
    # Source: 2.8.0+cu128 binary scan (sm_100, sm_120); CUDA 12.8 was the first toolkit for Blackwell.
    assert table.release("2.7").variant("cu128").coverage(CC(12, 0)) is not None
    for release in table.pytorch_releases:
        for variant in (v for v in release.variants if v.verified):
            covered = variant.coverage(CC(12, 0)) == "sass"  # the PTX of 1.0-1.5 reaches it only by JIT
            assert covered == (variant.cuda >= CudaVersion.parse("12.8")), (release.version, variant.name)


def test_binary_verified_arch_lists(table):
    # Source: fatbin scans of the default wheels (docs/table.md, "PyTorch").
    def sms(version, name):
        return [cc.sm for cc in table.release(version).variant(name).arch_list]

    assert sms("2.5", "cu124") == ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    assert sms("2.8", "cu128") == ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert sms("2.14", "cu130") == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert sms("2.15", "cu132") == sms("2.14", "cu130")
    # Read 2026-12-01 from the PyPI wheels (manylinux_2_28_x86_64, cp311) with a .nv_fatbin scan.
    assert sms("2.9", "cu128") == sms("2.10", "cu128") == sms("2.8", "cu128")
    for version in ("2.11", "2.12", "2.13"):
        assert sms(version, "cu130") == sms("2.14", "cu130"), version
    # Read 2026-12-01 from the 1.x PyPI wheels (torch/version.py, .nv_fatbin of libtorch*.so / libcaffe2_gpu.so).
    assert sms("1.2", "cu100") == ["sm_35", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75"]
    for version, name in (("1.3", "cu101"), ("1.4", "cu101"), ("1.5", "cu102")):
        assert sms(version, name) == ["sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75"], version
        assert table.release(version).variant(name).ptx == (CC(3, 7),), version
    assert table.release("1.2").variant("cu100").ptx == (CC(5, 0),)
    assert sms("1.6", "cu102") == sms("1.7", "cu102") == ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75"]
    for version in ("1.8", "1.9", "1.10", "1.11", "1.12"):
        assert sms(version, "cu102") == ["sm_37", "sm_50", "sm_60", "sm_70"], version  # builder 43c557e2: no sm_75
    assert sms("1.13", "cu117") == ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"]
    for version, name in (("1.2", "cu100"), ("1.3", "cu101"), ("1.4", "cu101"), ("1.5", "cu102"), ("1.6", "cu102"),
                          ("1.7", "cu102"), ("1.8", "cu102"), ("1.9", "cu102"), ("1.10", "cu102"), ("1.11", "cu102"),
                          ("1.12", "cu102"), ("1.13", "cu117")):
        assert table.release(version).variant(name).evidence == "binary", version
        assert table.release(version).default_variant == name, version
    binaries = (("2.5", "cu124"), ("2.8", "cu128"), ("2.9", "cu128"), ("2.10", "cu128"), ("2.11", "cu130"),
                ("2.12", "cu130"), ("2.13", "cu130"), ("2.14", "cu130"), ("2.15", "cu132"))
    for version, name in binaries:
        variant = table.release(version).variant(name)
        assert variant.ptx == () and variant.evidence == "binary", (version, name)
        assert table.release(version).default_variant == name


@pytest.mark.parametrize("version,name", [("2.12", "cu130"), ("2.13", "cu130"), ("2.14", "cu130"), ("2.15", "cu132")])
def test_aarch64_default_wheels_carry_their_own_arch_list(table, version, name):
    # Source: .nv_fatbin scans of the PyPI manylinux_2_28_aarch64 wheels (2.12.0, 2.13.0, 2.14.1, 2.15.0): SASS for
    # sm_80, sm_90, sm_100, sm_110, sm_120 (plus sm_103/sm_121 kernels), no PTX; no Turing or sm_86 code.
    variant = table.release(version).variant(name)
    arm = variant.for_platform("linux-aarch64")
    assert [cc.sm for cc in arm.arch_list] == ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120"]
    assert arm.ptx == () and arm.evidence == "binary"
    assert arm.coverage(CC(7, 5)) is None and variant.coverage(CC(7, 5)) == "sass"
    assert variant.for_platform("linux-x86_64") is variant
    assert table.release(version).default_wheel_platforms == ("linux-x86_64", "linux-aarch64")


def test_pypi_default_wheel_platforms(table):
    # Source: the 2.9.1/2.10.0 PyPI wheels gate every nvidia-* pin on platform_machine == "x86_64" (aarch64 gets CPU,
    # pytorch/pytorch issue 168065); the 2.15.0 win_amd64 PyPI wheel has no torch_cuda.dll (CPU only).
    assert table.release("2.9").default_wheel_platforms == ("linux-x86_64",)
    assert table.release("2.10").default_wheel_platforms == ("linux-x86_64",)
    assert "windows" not in table.release("2.15").default_wheel_platforms


def test_release_matrix_variants_2_11_to_2_14(table):
    # Source: pytorch/pytorch RELEASE.md CUDA Support Matrix (PRs 175253, 182849, 187075, 194367, 197555).
    def sms(version, name, platform=None):
        return [cc.sm for cc in table.release(version).variant(name).for_platform(platform).arch_list]

    maxwell_to_hopper = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
    for version in ("2.11", "2.12", "2.13", "2.14"):
        assert sms(version, "cu126") == maxwell_to_hopper, version
        assert table.release(version).variant("cu126").evidence == "release-matrix"
    for version in ("2.12", "2.13", "2.14"):
        assert sms(version, "cu126", "linux-aarch64") == ["sm_80", "sm_90"]
        cu132 = table.release(version).variant("cu132")
        assert cu132.evidence == "release-matrix" and cu132.ptx == ()  # PTX claimed for Linux, not read: none
        assert sms(version, "cu132") == sms("2.14", "cu130")
    assert sms("2.11", "cu128") == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]  # Volta dropped


def test_v100_runs_only_the_legacy_cu126_build_from_2_12_to_2_14(table):
    # Source: RELEASE.md (cu126 keeps Volta); CUDA 13 cannot build sm_70; RFC issue 190385 removes 12.6 in 2.15.
    for version in ("2.12", "2.13", "2.14"):
        runs = [v.name for v in table.release(version).variants if v.coverage(CC(7, 0)) == "sass"]
        assert runs == ["cu126"], version
    assert all(v.coverage(CC(7, 0)) is None for v in table.release("2.15").variants)


def test_unverified_and_patch_only_variants(table):
    # Source: pytorch/pytorch issue 185269 (cu129 built for 2.12.1, not 2.12.0; Linux only); PR 188443 (the
    # release/2.12 build case 12.9) TORCH_CUDA_ARCH_LIST="7.5;8.0;8.6;9.0;10.0;12.0", and the same set added to
    # release/2.13's arch table, CUDA_ARCHES 12.6/12.9/13.0/13.2); RFC 190385 (2.15 keeps 13.0, nothing read).
    blackwell_set = [CC(7, 5), CC(8, 0), CC(8, 6), CC(9, 0), CC(10, 0), CC(12, 0)]
    for version in ("2.12", "2.13"):
        cu129 = table.release(version).variant("cu129")
        assert cu129.verified and cu129.evidence == "build-script" and list(cu129.arch_list) == blackwell_set, version
        assert cu129.ptx == () and cu129.ptx_unknown and cu129.platforms == ("linux",), version
        assert not cu129.available_on("windows") and cu129.on_record_for("linux-aarch64") is None, version
        assert table.release(version).unverified_variants == (), version
    assert table.release("2.12").variant("cu129").first_patch == "2.12.1"
    assert table.release("2.13").variant("cu129").first_patch is None
    assert table.release("2.15").unverified_variants == ("cu130",)
    assert table.release("2.14").unverified_variants == ()
    assert table.release("1.8").variant("cu101").first_patch == "1.8.1"  # not on the page for 1.8.0


PTX_FROM_BUILD_SCRIPTS_ONLY = [("2.7", "cu128"), ("2.8", "cu129"), ("2.9", "cu129"), ("2.9", "cu130"),
                               ("2.10", "cu129"), ("2.10", "cu130"), ("2.11", "cu129")]


@pytest.mark.parametrize("version,name", PTX_FROM_BUILD_SCRIPTS_ONLY, ids=lambda v: str(v))
def test_ptx_claimed_without_a_binary_is_unknown(table, version, name):
    # Source: build scripts and a third-party table list 12.0+PTX for these, while release builds were stripped of
    # PTX in places (pytorch/pytorch PRs 175567, 188914) and no wheel of them was read: PTX is not on record,
    # so a GPU newer than the arch list is never judged to run by JIT on them.
    variant = table.release(version).variant(name)
    assert variant.ptx_unknown and variant.ptx == ()
    assert variant.coverage(CC(13, 0)) is None  # a future major: no SASS, and unknown PTX never counts
    assert variant.coverage(CC(12, 0)) == "sass"
    assert "PTX not on record" in variant.arch_summary()


def test_ptx_is_listed_only_where_read_from_a_binary(table):
    # Source: the .nv_fatbin scans (docs/table.md): PTX is listed for the 1.0.1 and 1.1.0 (cu90) and 1.2.0
    # (compute_50), and the 1.3.1, 1.4.0 and 1.5.1 (compute_37) PyPI wheels; every other variant with PTX on
    # record is a binary read.
    with_ptx = _releases_with(table, lambda v: bool(v.ptx))
    assert with_ptx == [("1.0", "cu90"), ("1.1", "cu90"), ("1.2", "cu100"), ("1.3", "cu101"), ("1.4", "cu101"), ("1.5", "cu102")]
    assert all(table.release(version).variant(name).evidence == "binary" for version, name in with_ptx)
    assert table.release("1.5").variant("cu102").coverage(CC(8, 6)) == "ptx"  # an RTX 3090 only by JIT
    assert table.release("1.5").variant("cu101").coverage(CC(8, 6)) is None  # its PTX is not on record


def test_pytorch_2_14_default_is_cuda_13_0_not_13_2(table):
    # Wrong claim: RFC issue 190355 proposed 13.2 as the 2.14 PyPI default. Source: the 2.14.0 and 2.14.1 PyPI
    # wheels pin cuda-toolkit==13.0.3 and nvidia-cudnn-cu13==9.24.0.43; 2.15.0 pins cuda-toolkit==13.2.2.
    assert table.release("2.14").default_variant == "cu130"
    assert table.release("2.15").default_variant == "cu132"


@pytest.mark.parametrize(
    "version,name,cudnn",
    [("2.0", "cu117", "8.5.0.96"), ("2.3", "cu121", "8.9.2.26"), ("2.4", "cu121", "9.1.0.70"),
     ("2.8", "cu128", "9.10.2.21"), ("2.9", "cu128", "9.10.2.21"), ("2.10", "cu128", "9.10.2.21"),
     ("2.11", "cu130", "9.19.0.56"), ("2.12", "cu130", "9.20.0.48"), ("2.13", "cu130", "9.20.0.48"),
     ("2.14", "cu130", "9.24.0.43"), ("2.15", "cu132", "9.26.0.51")],
    ids=lambda v: str(v),
)
def test_cudnn_of_default_wheels(table, version, name, cudnn):
    # Source: the nvidia-cudnn pin in each default wheel's METADATA (RELEASE.md for 2.0-2.3).
    assert table.release(version).variant(name).cudnn == cudnn


# --- GPUs and forward compatibility --------------------------------------------------------------


def test_catalog_spans_kepler_to_blackwell(table):
    assert len(table.gpus) >= 80
    assert {m.architecture for m in table.gpus} >= {"Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell"}


@pytest.mark.parametrize(
    "name,product,cc",
    [
        ("RTX 3060", "GeForce RTX 3060", "8.6"),
        ("NVIDIA A100-SXM4-80GB", "A100", "8.0"),  # deviceQuery output; open-gpu-kernel-modules README
        ("Tesla V100-SXM2-16GB", "V100", "7.0"),  # cloud GPU ids
        ("Tesla K80", "Tesla K80", "3.7"),  # nvidia-smi logs
        ("NVIDIA H100 80GB HBM3", "H100", "9.0"),
        ("GeForce RTX 2080 Ti", "GeForce RTX 2080 Ti", "7.5"),  # older drivers: no "NVIDIA " prefix
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000 Blackwell", "12.0"),
        ("NVIDIA B200", "B200", "10.0"),
    ],
    ids=lambda v: str(v),
)
def test_nvml_and_short_names_resolve(table, name, product, cc):
    model = table.gpu_model(name)
    assert model is not None and model.name == product and str(model.cc) == cc


def test_unknown_names_do_not_resolve(table):
    assert table.gpu_model("NVIDIA Imaginary X9000") is None


def test_forward_compatibility(table):
    # Source: CUDA Compatibility guide (r615), Forward Compatibility: data-center GPUs, select NGC Server
    # Ready RTX SKUs and Jetson; not GeForce. The matrix: "C" cells per driver branch.
    forward = table.forward_compat
    assert forward.package_for(CudaVersion.parse("12.4")) == "cuda-compat-12-4"
    assert "consumer" not in forward.brand_classes and "data-center" in forward.brand_classes
    assert forward.select_brand_classes == ("professional",)
    assert forward.supported_on(535, CudaVersion.parse("12.6")) is True
    assert forward.supported_on(570, CudaVersion.parse("12.9")) is True
    assert forward.supported_on(580, CudaVersion.parse("12.9")) is False  # older package on newer driver: X
    assert forward.supported_on(550, CudaVersion.parse("12.6")) is None  # not a target branch


# Source: NVIDIA Data Center Drivers, "Supported Drivers and CUDA Toolkit Versions", Table 2: the 615
# edition (R535 LTSB June 2026, R580 LTSB June 2028, R595 PB March 2027, R610 NFB August 2026) and the
# 620 edition (R580 LTSB June 2028, R595 PB March 2027, R620 LTSB September 2029; only LTS and
# Production branches listed). R620's CUDA: NVIDIA's redistrib_620.70.06.json (cuda_compat for 13.5).
BRANCH_LIFECYCLE = [
    (535, "LTSB", "2026-06"),
    (570, None, None),
    (580, "LTSB", "2028-06"),
    (590, None, None),
    (595, "PB", "2027-03"),
    (610, "NFB", "2026-08"),
    (615, None, None),
    (620, "LTSB", "2029-09"),
]


@pytest.mark.parametrize("branch,designation,end_of_life", BRANCH_LIFECYCLE, ids=[f"nvidia-dc-drivers-r{b}" for b, _, _ in BRANCH_LIFECYCLE])
def test_forward_compat_branch_lifecycle(table, branch, designation, end_of_life):
    row = table.forward_compat.branch(branch)
    assert row is not None
    assert (row.designation, row.end_of_life) == (designation, end_of_life)
    if designation is not None:
        assert row.source in ("nvidia-dc-drivers-615", "nvidia-dc-drivers-620")


def test_live_forward_compat_branches_are_r580_r595_r620_in_december_2026(table):
    forward = table.forward_compat
    assert [b.branch for b in forward.live_branches("2026-12-01")] == [580, 595, 620]
    assert forward.branch(620).cuda == CudaVersion.parse("13.5")
    # Before June 2026 R535 was still a target; in June 2026 it is not (its end-of-life month).
    assert forward.live(535, "2026-05-31") and not forward.live(535, "2026-06-01")
    assert not forward.live(610, "2026-07-01")  # a New Feature Branch is never a target
    assert forward.live(595, "2027-02-28") and not forward.live(595, "2027-03-01")
    assert table.compat_branches_for(CudaVersion.parse("13.1"), today="2026-12-01") == (580,)
    assert table.compat_branches_for(CudaVersion.parse("13.1")) == (535, 570, 580)  # the matrix as printed


def test_features(table):
    by_name = {f.name: str(f.min_cc) for f in table.features}
    assert by_name["tensor cores"] == "7.0" and by_name["bf16"] == "8.0" and by_name["FP8"] == "8.9"
    assert by_name["torch.compile GPU backend (Triton)"] == "7.0"  # torch/utils/_triton.py: major >= 7


def test_cu129_wheels_are_on_record_for_linux_only():
    # Source: a third-party table (Linux x86_64 cu129 wheels of 2.9) and sgl-project/sglang PR 16802, which
    # installs torch==2.9.1+cu129 on GB200 (aarch64); pytorch/pytorch issue 185269: SGLang (Linux) depends on
    # the 2.11 cu129 binary. No Windows cu129 wheel is on record, so none is offered there.
    assert table_platforms("2.9", "cu129") == ("linux-x86_64", "linux-aarch64")
    assert table_platforms("2.11", "cu129") == ("linux",)
    assert table_platforms("2.12", "cu129") == ("linux",)
    assert table_platforms("2.13", "cu129") == ("linux",)


# (release, variant, TORCH_CUDA_ARCH_LIST of its build script). Source: pytorch/builder manywheel/build.sh on main at
# each release (1.0-1.8; commits 8d064bfc, 43c557e2, 8924a150) and on release/1.9-1.13 (build_cuda.sh from 1.11).
BUILD_SCRIPT_1X = [
    ("1.0", "cu100", "3.5;5.0+PTX;6.0;6.1;7.0;7.5"), ("1.1", "cu100", "3.5;5.0+PTX;6.0;6.1;7.0;7.5"),
    ("1.3", "cu100", "3.7+PTX;5.0;6.0;6.1;7.0;7.5"), ("1.5", "cu101", "3.7+PTX;5.0;6.0;6.1;7.0;7.5"),
    ("1.6", "cu101", "3.7;5.0;6.0;7.0"), ("1.7", "cu101", "3.7;5.0;6.0;7.0;7.5"), ("1.7", "cu110", "3.7;5.0;6.0;7.0;7.5;8.0"),
    ("1.8", "cu101", "3.7;5.0;6.0;7.0"), ("1.8", "cu111", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"),
    ("1.9", "cu111", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"), ("1.10", "cu111", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"),
    ("1.10", "cu113", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"), ("1.11", "cu113", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"),
    ("1.11", "cu115", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"), ("1.12", "cu113", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"),
    ("1.12", "cu116", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"), ("1.13", "cu116", "3.7;5.0;6.0;7.0;7.5;8.0;8.6"),
]


@pytest.mark.parametrize("version,name,arch_list", BUILD_SCRIPT_1X, ids=lambda v: str(v))
def test_1x_build_script_arch_lists(version, name, arch_list):
    variant = table_variant(version, name)
    assert variant.evidence == "build-script"
    assert [str(cc) for cc in variant.arch_list] == [a.replace("+PTX", "") for a in arch_list.split(";")]
    # The build script's +PTX is not a binary: where it asks for PTX, the PTX is recorded as unknown.
    assert variant.ptx == () and variant.ptx_unknown == ("+PTX" in arch_list)


def table_platforms(version, name):
    from cudadoctor.app.loader import load_table

    return load_table().release(version).variant(name).platforms


@pytest.mark.parametrize(
    "version,name,cudnn",
    [("2.12", "cu126", "9.10.2.21"), ("2.13", "cu126", "9.10.2.21"), ("2.13", "cu132", "9.20.0.48"),
     ("2.14", "cu126", "9.10.2.21"), ("2.14", "cu132", "9.24.0.43")],
    ids=lambda v: str(v),
)
def test_cudnn_of_release_matrix_variants(version, name, cudnn):
    # Source: RELEASE.md's Release Compatibility Matrix rows for 2.13 (PR 187075) and 2.14 (PR 194367).
    assert table_variant(version, name).cudnn == cudnn


def table_variant(version, name):
    from cudadoctor.app.loader import load_table

    return load_table().release(version).variant(name)


def test_branch_lifecycles_are_judged_on_the_run_date(table):
    # The request's today wins; without it the later of the snapshot's date and the table's review.
    assert table.reference_date("2026-05-01", "2025-01-01T00:00:00Z") == "2026-05-01"
    assert table.reference_date(None, "2025-01-01T00:00:00Z") == table.updated
    assert table.reference_date(None, "2030-01-01T00:00:00Z") == "2030-01-01"
    assert table.reference_date(None, None) == table.updated
