"""NVIDIA's rules for which GPU code runs on which GPU, as cudadoctor.binaries.judge applies them,
and the scan's findings built from them (pure: records in, verdicts out)."""

from __future__ import annotations

from typing import Optional

import pytest

from cudadoctor.binaries.assess import DriverUnderTest, GpuUnderTest, assess
from cudadoctor.binaries.code import PTX, SASS, BinaryCode, GpuCode
from cudadoctor.binaries.judge import JIT, NATIVE, NO_KERNEL_IMAGE, PTX_TOO_NEW, judge_code
from cudadoctor.binaries.scan import DIRECTORY, ScannedFile, ScanSource


def sass(arch: int, suffix: str = "") -> GpuCode:
    return GpuCode(kind=SASS, arch=arch, suffix=suffix, ptx_isa=None, compressed=False)


def ptx(arch: int, isa: str, suffix: str = "") -> GpuCode:
    return GpuCode(kind=PTX, arch=arch, suffix=suffix, ptx_isa=isa, compressed=True)


def code(*entries: GpuCode) -> BinaryCode:
    return BinaryCode(entries=entries, needed=("libcudart.so.12",), fatbins=1)


@pytest.mark.parametrize(
    "entries, gpu, driver, status",
    [
        ((sass(80),), (8, 6), None, NATIVE),  # a higher minor of the same major
        ((sass(86),), (8, 0), None, NO_KERNEL_IMAGE),  # never a lower minor
        ((sass(80), sass(90)), (12, 0), None, NO_KERNEL_IMAGE),  # never another major
        ((sass(90, "a"),), (9, 0), None, NATIVE),
        ((sass(100, "a"),), (10, 3), None, NO_KERNEL_IMAGE),  # "a": that GPU only
        ((sass(100, "f"),), (10, 3), None, NATIVE),  # "f": its family
        ((ptx(80, "8.8"),), (12, 0), (12, 9), JIT),  # PTX runs forward when the driver knows its ISA
        ((ptx(80, "8.8"),), (12, 0), (12, 8), PTX_TOO_NEW),  # ISA 8.8 came with CUDA 12.9
        ((ptx(90, "8.0"),), (8, 6), (12, 9), NO_KERNEL_IMAGE),  # never backward
        ((ptx(90, "8.0", "a"),), (10, 0), (13, 0), NO_KERNEL_IMAGE),
        ((ptx(120, "8.8", "f"),), (12, 1), (12, 9), JIT),
        ((ptx(120, "9.9"),), (12, 0), (13, 2), PTX_TOO_NEW),  # an ISA newer than any known release
        ((sass(120), ptx(120, "9.9")), (12, 0), (12, 8), NATIVE),  # SASS first: no JIT needed
    ],
)
def test_which_code_runs_on_which_gpu(entries: tuple[GpuCode, ...], gpu: tuple[int, int], driver: Optional[tuple[int, int]], status: str) -> None:
    assert judge_code(code(*entries), gpu, driver).status == status


def test_jit_with_an_unknown_driver_says_which_cuda_it_needs() -> None:
    verdict = judge_code(code(ptx(80, "9.0")), (12, 0), None)
    assert verdict.status == JIT and verdict.needs_cuda == "13.0"


def source(*files: ScannedFile) -> ScanSource:
    return ScanSource(kind=DIRECTORY, location="/x", files=files)


def test_a_gpu_without_a_compute_capability_is_not_judged() -> None:
    scanned = ScannedFile(path="a.so", package="ext", version="1.0", code=code(sass(80)))
    result = assess([source(scanned)], [GpuUnderTest(index=0, name="Mystery GPU", compute_capability=None)], None)
    assert [(f.code, f.severity) for f in result.findings] == [("scan-gpu-unknown", "warn")]
    assert not result.fails


def test_one_finding_per_package_and_gpu_naming_the_failing_binary() -> None:
    files = (
        ScannedFile(path="ext/_a.so", package="ext", version="1.0", code=code(sass(80), sass(90))),
        ScannedFile(path="ext/_b.so", package="ext", version="1.0", code=code(sass(80), sass(120))),
        ScannedFile(path="ext/_plain.so", package="ext", version="1.0", code=BinaryCode(entries=(), needed=(), fatbins=0)),
    )
    gpus = [GpuUnderTest(index=0, name="A100", compute_capability="8.0"), GpuUnderTest(index=1, name="GeForce RTX 5090", compute_capability="12.0")]
    result = assess([source(*files)], gpus, DriverUnderTest(version="580.65.06", cuda="13.0"))
    assert result.fails
    assert [(f.code, f.gpu_index) for f in result.findings] == [("binary-ok", 0), ("binary-no-kernel-image", 1)]
    failing = result.findings[1]
    assert failing.title == "ext 1.0 has no code for sm_120: it will fail on the GeForce RTX 5090"
    assert "ext/_a.so carries sm_80 sm_90" in failing.detail and "_b.so" not in failing.detail
    assert 'TORCH_CUDA_ARCH_LIST="12.0"' in failing.hint
    assert [b.file.path for b in result.packages[0].binaries] == ["ext/_a.so", "ext/_b.so"]  # no GPU code: not listed


def test_a_runtime_of_a_newer_major_than_the_driver_fails_whatever_the_gpu_code() -> None:
    cuda13 = BinaryCode(entries=(sass(90),), needed=("libcudart.so.13", "libc.so.6"), fatbins=1)
    scanned = ScannedFile(path="ext/_c.so", package="ext", version="2.0", code=cuda13)
    h100 = [GpuUnderTest(index=0, name="H100", compute_capability="9.0")]
    old = assess([source(scanned)], h100, DriverUnderTest(version="570.26", cuda="12.8"))
    assert [(f.code, f.severity) for f in old.findings] == [("binary-runtime-too-new", "fail"), ("binary-ok", "ok")]
    assert "CUDA 13 runtime: driver 570.26 supports CUDA 12.8" in old.findings[0].title
    new = assess([source(scanned)], h100, DriverUnderTest(version="580.65.06", cuda="13.0"))
    assert [f.code for f in new.findings] == ["binary-ok"]
