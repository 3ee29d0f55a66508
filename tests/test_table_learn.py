"""`cudadoctor table learn WHEEL|URL`: a torch wheel's arch list read from its own libtorch_cuda.so
(fat binaries written here, wrapped into an ELF file by gcc) goes into the table overlay with
evidence "binary", so a variant no source settles becomes one the checks judge."""

from __future__ import annotations

import http.server
import json
import threading
import zipfile
from pathlib import Path
from typing import Iterator

import pytest

from gpu_code import entry_bytes, fatbin_bytes, wrap_shared_object
from helpers import run_cli

SASS, PTX = 2, 1
PLAIN, ARCH_SPECIFIC = 0x11, 0x100011  # entry flags: sm_XY, sm_XYa
ARCHS = (75, 80, 86, 90, 100, 120)  # what 2.15's cu130 wheels would carry; nothing in the table settles it
WHEEL = "torch-2.15.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl"
WHAT_IF = ("--driver", "595.45.04", "--gpu", "H100")


def torch_wheel(directory: Path, name: str = WHEEL, archs: tuple[int, ...] = ARCHS, ptx: tuple[int, ...] = ()) -> Path:
    entries = [entry_bytes(SASS, arch, b"\x7fELF" + b"\0" * 60, flags=PLAIN) for arch in archs]
    entries.append(entry_bytes(SASS, 90, b"\x7fELF" + b"\0" * 60, flags=ARCH_SPECIFIC))  # sm_90a: not a plain target
    entries += [entry_bytes(PTX, arch, b".version 8.8\n\0\0\0\0", major=8, minor=8) for arch in ptx]
    library = wrap_shared_object(directory / "build", "libtorch_cuda.so", [fatbin_bytes(entries)])
    wheel = directory / name
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(library, "torch/lib/libtorch_cuda.so")
        archive.writestr("torch/__init__.py", "")
        archive.writestr("torch-2.15.0+cu130.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 2.15.0+cu130\n\n")
        archive.writestr("torch-2.15.0+cu130.dist-info/RECORD", "")
    return wheel


def test_a_learned_wheel_makes_an_unverified_variant_judged_from_its_binary(tmp_path: Path) -> None:
    before = run_cli("check", "--torch", "2.15", "--variant", "cu130", *WHAT_IF)
    assert before.exit_code == 2 and "unverified" in before.stderr  # nothing settles 2.15 cu130 in the shipped table
    learned = run_cli("table", "learn", str(torch_wheel(tmp_path)), "--json")
    assert learned.exit_code == 0, learned.stderr
    data = learned.json()
    assert (data["release"], data["variant"], data["platform"]) == ("2.15", "cu130", "linux-x86_64")
    assert data["arch_list"] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"] and data["ptx"] == []  # sm_90a left out
    assert data["table_evidence_before"] == "unverified"
    table = run_cli("table", "--torch", "2.15", "--json").json()
    cu130 = next(v for v in table["variants"] if v["name"] == "cu130")
    assert cu130["evidence"] == "binary" and cu130["arch_list"] == data["arch_list"]
    after = run_cli("check", "--torch", "2.15", "--variant", "cu130", *WHAT_IF, "--json")
    assert after.exit_code == 0, after.stdout + after.stderr
    assert after.json()["target"]["variant"] == "cu130"
    assert any(f["code"] == "gpu-arch-ok" for f in after.json()["findings"])
    # A GPU the learned list lacks fails as it would on a wheel the table describes.
    volta = run_cli("check", "--torch", "2.15", "--variant", "cu130", "--driver", "595.45.04", "--gpu", "V100", "--json")
    assert volta.exit_code == 1 and "gpu-arch-not-built" in volta.codes()


def test_the_text_says_what_the_wheel_carries_and_what_changed(tmp_path: Path) -> None:
    run = run_cli("table", "learn", str(torch_wheel(tmp_path, ptx=(120,))))
    assert run.exit_code == 0, run.stderr
    first, second = run.stdout.splitlines()[:2]
    assert first == f"read {WHEEL}: PyTorch 2.15.0 cu130 (linux-x86_64) carries sm_75 sm_80 sm_86 sm_90 sm_100 sm_120; PTX compute_120"
    assert "was unverified; it is now binary evidence" in second
    again = run_cli("table", "learn", str(torch_wheel(tmp_path / "again")))  # the same variant again: replaced, not added twice
    assert again.exit_code == 0 and f"replaces what `table learn` read before from {WHEEL}" in again.stdout
    overlay = json.loads(Path(run_cli("table", "learn", str(torch_wheel(tmp_path / "third")), "--json").json()["overlay_path"]).read_text())
    assert len(overlay["learned"]) == 1


class _Files(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    wheel = torch_wheel(tmp_path / "www")
    handler = lambda *a, **k: _Files(*a, directory=str(wheel.parent), **k)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/{WHEEL.replace('+', '%2B')}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_wheel_is_learned_from_a_url(served: str) -> None:
    run = run_cli("table", "learn", served, "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["variant"] == "cu130" and len(run.json()["sha256"]) == 64


@pytest.mark.parametrize(
    "name,said",
    [
        ("not-a-wheel.zip", "not a wheel file name"),
        ("flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl", "a wheel of flash-attn, not of torch"),
        ("torch-9.9.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl", "PyTorch 9.9 is not in the table"),
    ],
)
def test_a_wheel_that_cannot_be_learned_is_one_line_exit_2(tmp_path: Path, name: str, said: str) -> None:
    run = run_cli("table", "learn", str(torch_wheel(tmp_path, name=name)))
    assert run.exit_code == 2 and said in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert run_cli("table", "--torch", "2.15", "--json").json()["variants"][0]["evidence"] == "unverified"  # nothing written


def test_a_cpu_wheel_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    cpu = tmp_path / "torch-2.15.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(cpu, "w") as archive:
        archive.writestr("torch/__init__.py", "")
    run = run_cli("table", "learn", str(cpu))
    assert run.exit_code == 2 and "carries no GPU code" in run.stderr
    missing = run_cli("table", "learn", str(tmp_path / "absent.whl"))
    assert missing.exit_code == 2 and "no such file" in missing.stderr


def test_an_arm_wheel_is_learned_as_that_platform_s_build(tmp_path: Path) -> None:
    name = "torch-2.15.0+cu130-cp311-cp311-manylinux_2_28_aarch64.whl"
    run = run_cli("table", "learn", str(torch_wheel(tmp_path, name=name, archs=(80, 90, 100, 120))), "--json")
    assert run.exit_code == 0 and run.json()["platform"] == "linux-aarch64"
    overlay = json.loads(Path(run.json()["overlay_path"]).read_text())
    assert [(e["variant"], e["platform"]) for e in overlay["learned"]] == [("cu130", "linux-aarch64")]
    table = run_cli("table", "--torch", "2.15", "--json").json()
    cu130 = next(v for v in table["variants"] if v["name"] == "cu130")
    assert cu130["evidence"] == "unverified"  # the x86_64 wheels' list is still not known


def test_a_variant_the_table_lacks_is_added_platform_by_platform(tmp_path: Path) -> None:
    arm = "torch-2.15.0+cu128-cp311-cp311-manylinux_2_28_aarch64.whl"
    x86 = "torch-2.15.0+cu128-cp311-cp311-manylinux_2_28_x86_64.whl"
    first = run_cli("table", "learn", str(torch_wheel(tmp_path / "arm", name=arm, archs=(80, 90))))
    assert first.exit_code == 0 and "had no cu128 of PyTorch 2.15" in first.stdout, first.stderr
    # Arm only: the x86_64 wheels' list is still unknown, so it is not offered there.
    x86_check = run_cli("check", "--torch", "2.15", "--variant", "cu128", *WHAT_IF)
    assert x86_check.exit_code == 2 and "unverified" in x86_check.stderr
    second = run_cli("table", "learn", str(torch_wheel(tmp_path / "x86", name=x86, archs=(75, 80, 86, 90, 100, 120))))
    assert second.exit_code == 0, second.stderr
    cu128 = next(v for v in run_cli("table", "--torch", "2.15", "--json").json()["variants"] if v["name"] == "cu128")
    assert cu128["evidence"] == "binary" and cu128["arch_list"] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
    assert set(cu128["platforms"]) == {"linux-aarch64", "linux-x86_64"}
    after = run_cli("check", "--torch", "2.15", "--variant", "cu128", *WHAT_IF, "--json")
    assert after.exit_code == 0 and after.json()["target"]["variant"] == "cu128"
