"""`check` judges an installed torch from its own binaries: the fat binaries of
torch/lib/libtorch_cuda.so (made here by NVIDIA's NVRTC and nvFatbin) are read without importing
torch; what they carry beats the table, and a disagreement with the table is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_code import NvFatbin, Nvrtc, nvidia_tools, wrap_shared_object
from scenario import run_check
from test_torch import fake_install, gpu_host

RTX_5090 = {"name": "NVIDIA GeForce RTX 5090", "cc": "12.0", "memory": 34190917632}
H100 = {"name": "NVIDIA H100 80GB HBM3", "cc": "9.0", "memory": 85520809984}
BINARY_SOURCE = "the installed torch's binaries"


@pytest.fixture(scope="module")
def toolchain() -> tuple[Nvrtc, NvFatbin]:
    tools = nvidia_tools()
    return Nvrtc(tools.nvrtc), NvFatbin(tools.nvfatbin)


def torch_with_binaries(root: Path, version: str, cuda: str, targets: list[str], toolchain: tuple[Nvrtc, NvFatbin]) -> Path:
    """A torch install whose libtorch_cuda.so carries the targets, and whose import leaves a mark."""
    site = fake_install(root / "site", version, cuda)
    (site / "torch" / "__init__.py").write_text(f"open({str(root / 'imported')!r}, 'w').close()\n")
    nvrtc, nvfatbin = toolchain
    wrap_shared_object(site / "torch" / "lib", "libtorch_cuda.so", [nvfatbin.build(nvrtc, targets)])
    return site


def test_an_installed_torch_is_judged_from_its_binaries_without_importing_it(fake_nvml_env, tmp_path, toolchain) -> None:
    site = torch_with_binaries(tmp_path, "2.9.1+cu128", "12.8", ["sm_80", "sm_90"], toolchain)
    run = run_check(gpu_host(fake_nvml_env, tmp_path, gpus=(RTX_5090,), pythonpath=site))
    torch = run.data["host"]["torch"]
    assert torch["arch_list"] == ["sm_80", "sm_90"] and torch["arch_evidence"] == "binary"
    missing = run.find("torch-arch-missing")
    assert missing["severity"] == "fail" and "built for sm_80, sm_90" in missing["detail"] and BINARY_SOURCE in missing["source"]
    disagrees = run.find("torch-arch-table-disagrees")
    assert disagrees["severity"] == "info" and "sm_120" in disagrees["detail"]  # the table's cu128 has sm_120
    assert not (tmp_path / "imported").exists(), "check imported torch"


def test_binaries_that_match_the_table_raise_no_disagreement(fake_nvml_env, tmp_path, toolchain) -> None:
    site = torch_with_binaries(tmp_path, "2.13.0+cu130", "13.0", ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], toolchain)
    run = run_check(gpu_host(fake_nvml_env, tmp_path, gpus=(RTX_5090,), pythonpath=site))
    assert "torch-arch-table-disagrees" not in run.codes and "torch-arch-missing" not in run.codes
    assert run.find("torch-ok")["severity"] == "ok"


def test_a_variant_the_table_cannot_settle_is_judged_from_the_binary(fake_nvml_env, tmp_path, toolchain) -> None:
    """2.13 cu129 has no arch list on record (unverified): its binary answers for it."""
    site = torch_with_binaries(tmp_path, "2.13.0+cu129", "12.9", ["sm_120"], toolchain)
    run = run_check(gpu_host(fake_nvml_env, tmp_path, gpus=(H100,), pythonpath=site))
    missing = run.find("torch-arch-missing")
    assert missing["severity"] == "fail" and "sm_90" in missing["title"] and BINARY_SOURCE in missing["source"]


def test_an_unreadable_torch_library_falls_back_to_the_table(fake_nvml_env, tmp_path) -> None:
    site = fake_install(tmp_path / "site", "2.9.1+cu128", "12.8")
    (site / "torch" / "lib").mkdir()
    (site / "torch" / "lib" / "libtorch_cuda.so").write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 20)
    run = run_check(gpu_host(fake_nvml_env, tmp_path, gpus=(RTX_5090,), pythonpath=site))
    finding = run.find("torch-binary-unreadable")
    assert finding["severity"] == "info" and "truncated" in finding["detail"]
    assert run.data["host"]["torch"]["arch_evidence"] is None
    assert "torch-arch-missing" not in run.codes  # the table's 2.9 cu128 carries sm_120


def test_an_extension_beside_torch_is_judged_from_its_binaries(fake_nvml_env, tmp_path, toolchain) -> None:
    """torch carries sm_120; flash-attn (which requires torch) only sm_80/sm_90: the job fails once
    it is imported, and check says so. A package that does not require torch is not judged."""
    nvrtc, nvfatbin = toolchain
    site = torch_with_binaries(tmp_path, "2.9.1+cu128", "12.8", ["sm_80", "sm_90", "sm_120"], toolchain)
    for name, requires, targets in (("flash_attn", "Requires-Dist: torch\nRequires-Dist: einops\n", ["sm_80", "sm_90"]),
                                    ("other_gpu", "Requires-Dist: numpy\n", ["sm_80"])):  # fmt: skip
        library = wrap_shared_object(tmp_path / "build" / name, f"{name}_cuda.so", [nvfatbin.build(nvrtc, targets)])
        (site / name).mkdir()
        (site / name / library.name).write_bytes(library.read_bytes())
        info = site / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 1.0\n{requires}\n")
        (info / "RECORD").write_text(f"{name}/{library.name},,\n{info.name}/METADATA,,\n")
    run = run_check(gpu_host(fake_nvml_env, tmp_path, gpus=(RTX_5090,), pythonpath=site))
    extensions = run.data["host"]["torch"]["extensions"]
    assert extensions == [{"name": "flash-attn", "version": "1.0", "arch_list": ["sm_80", "sm_90"], "error": None}]
    failing = run.find("torch-extension-arch-missing")
    assert failing["severity"] == "fail" and failing["title"].startswith("flash-attn 1.0, installed beside 2.9.1+cu128, has no code for")
    assert "sm_120" in failing["title"] and BINARY_SOURCE in failing["source"]
    assert run.find("torch-ok")["severity"] == "ok"  # torch itself fits
    assert run.status == 1
