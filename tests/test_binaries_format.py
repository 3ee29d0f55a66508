"""The fat binary reader on shared objects gcc builds here around fat binaries written by hand:
what it reads, and one line (never a crash, never an unbounded read) for truncated, corrupt, huge
and hostile files; and `cudadoctor scan`'s answers for such files and bad paths."""

from __future__ import annotations

import io
import json
import random
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

from cudadoctor.binaries.code import BinaryCode
from cudadoctor.binaries.elf import read_elf
from cudadoctor.binaries.errors import BinaryFormatError
from cudadoctor.binaries.read import read_binary
from gpu_code import entry_bytes, fatbin_bytes, wrap_shared_object
from helpers import Run, run_cli

REPO = Path(__file__).resolve().parent.parent
PTX_TEXT = b".version 8.8\n.target sm_90\n.address_size 64\n\0\0\0\0"


def good_fatbin() -> bytes:
    return fatbin_bytes(
        [
            entry_bytes(2, 80, b"\x7fELF" + b"\0" * 60),
            entry_bytes(2, 90, b"\x7fELF" + b"\0" * 60, flags=0x100011),  # sm_90a
            entry_bytes(1, 90, PTX_TEXT, major=8, minor=8, flags=0x2011),  # compressed PTX, ISA 8.8
        ]
    )


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wrap_shared_object(tmp_path_factory.mktemp("lib"), "libhand.so", [good_fatbin(), good_fatbin()])


class Bounded(io.BytesIO):
    """A stream that fails any read larger than a cap or without a size (an unbounded read)."""

    cap = 8 << 20

    def read(self, count: int | None = -1) -> bytes:
        assert count is not None and 0 <= count <= self.cap, f"read({count})"
        return super().read(count)


def read_bytes(data: bytes) -> BinaryCode:
    return read_binary(Bounded(data), len(data))


def fatbin_offset(data: bytes) -> int:
    section = read_elf(io.BytesIO(data), len(data)).section(".nv_fatbin")
    assert section is not None
    return section.offset


def test_entries_are_read_with_their_kind_arch_isa_and_compression(library: Path) -> None:
    code = read_bytes(library.read_bytes())
    assert code.fatbins == 2
    listing = [(e.kind, e.sm, e.ptx_isa, e.compressed) for e in code.entries]
    assert listing == [("sass", "sm_80", None, False), ("sass", "sm_90a", None, False), ("ptx", "sm_90", "8.8", True)] * 2
    assert code.needed[0] == "libcudart.so.12" and code.cuda_runtime == "12"


def test_a_library_without_a_fatbin_section_has_no_gpu_code(tmp_path: Path) -> None:
    source = tmp_path / "plain.c"
    source.write_text("int plain(void) { return 0; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(tmp_path / "libplain.so"), str(source)], check=True)
    code = read_bytes((tmp_path / "libplain.so").read_bytes())
    assert code.entries == () and code.fatbins == 0 and code.cuda_runtime is None


def test_a_32_bit_elf_has_no_gpu_code() -> None:
    header = b"\x7fELF\x01\x01\x01" + b"\0" * 57
    assert read_bytes(header).entries == ()


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "truncated"),
        (b"\x7fELF\x02\x01", "truncated"),
        (b"MZ" + b"\0" * 100, "not an ELF file"),
    ],
)
def test_tiny_and_foreign_files_are_one_line_errors(data: bytes, message: str) -> None:
    with pytest.raises(BinaryFormatError, match=message):
        read_bytes(data)


def test_every_truncation_is_a_one_line_error_or_a_shorter_listing(library: Path) -> None:
    data = library.read_bytes()
    for cut in list(range(0, len(data), 61)) + [len(data) - 1]:
        try:
            read_bytes(data[:cut])
        except BinaryFormatError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 300
    with pytest.raises(BinaryFormatError, match="truncated"):
        read_bytes(data[: len(data) - 10])  # the section table, at the end, is cut


def patched(data: bytes, offset: int, value: bytes) -> bytes:
    return data[:offset] + value + data[offset + len(value) :]


def test_a_corrupt_fatbin_magic_is_named(library: Path) -> None:
    data = library.read_bytes()
    bad = patched(data, fatbin_offset(data), struct.pack("<I", 0xDEADBEEF))
    with pytest.raises(BinaryFormatError, match=r"corrupt fat binary at offset \d+: magic 0xdeadbeef"):
        read_bytes(bad)


def test_an_entry_header_that_cannot_advance_is_an_error(library: Path) -> None:
    data = library.read_bytes()
    bad = patched(data, fatbin_offset(data) + 16 + 4, struct.pack("<I", 0))  # the first entry's header size
    with pytest.raises(BinaryFormatError, match="header size 0"):
        read_bytes(bad)


def test_sizes_past_the_section_are_errors_not_reads(library: Path) -> None:
    data = library.read_bytes()
    at = fatbin_offset(data)
    with pytest.raises(BinaryFormatError, match="truncated fat binary at offset"):
        read_bytes(patched(data, at + 8, struct.pack("<Q", 1 << 62)))  # the fat binary's size
    with pytest.raises(BinaryFormatError, match="payload of"):
        read_bytes(patched(data, at + 16 + 8, struct.pack("<Q", 1 << 62)))  # the first entry's payload


def test_a_huge_section_count_is_refused_before_it_is_read(library: Path) -> None:
    data = library.read_bytes()
    # e_shnum = 0 with section 0's sh_size as the count (ELF extended numbering)
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    bad = patched(patched(data, 0x3C, struct.pack("<H", 0)), shoff + 32, struct.pack("<Q", 10**12))
    with pytest.raises(BinaryFormatError, match="too many sections"):
        read_bytes(bad)
    with pytest.raises(BinaryFormatError, match="truncated"):
        read_bytes(patched(data, 0x28, struct.pack("<Q", len(data) + 4096)))  # e_shoff past the end


def test_random_corruption_gives_a_listing_or_one_line_never_a_crash(library: Path) -> None:
    data = library.read_bytes()
    at = fatbin_offset(data)
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    rng = random.Random(19)
    hot = list(range(0, 64)) + list(range(at, at + 400)) + list(range(shoff, len(data)))
    for _ in range(1500):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[rng.choice(hot)] = rng.randrange(256)
        try:
            read_bytes(bytes(mutated))
        except BinaryFormatError as exc:
            assert "\n" not in str(exc)


# ---- the scan command on such files ----------------------------------------------------------


def scan(*args: str) -> Run:
    return run_cli("scan", *args)


def assert_one_line_usage_error(run: subprocess.CompletedProcess[str], text: str) -> None:
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == "" and len(run.stderr.splitlines()) == 1 and text in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_a_corrupt_named_file_is_a_one_line_usage_error(tmp_path: Path, library: Path) -> None:
    data = library.read_bytes()
    bad = tmp_path / "libbad.so"
    bad.write_bytes(patched(data, fatbin_offset(data), b"\0\0\0\1"))
    assert_one_line_usage_error(scan(str(bad), "--gpu", "A100"), "corrupt fat binary")


def test_bad_paths_and_interpreters_are_one_line_usage_errors(tmp_path: Path) -> None:
    assert_one_line_usage_error(scan(str(tmp_path / "missing")), "no such file or directory")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    assert_one_line_usage_error(scan(str(text)), "not an ELF file, a wheel or a directory")
    wheel = tmp_path / "broken-1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK not really")
    assert_one_line_usage_error(scan(str(wheel)), "not a readable wheel")
    assert_one_line_usage_error(scan("--python", str(tmp_path / "nope")), "no such interpreter")
    assert_one_line_usage_error(scan("--python", str(text), "--gpu", "A100"), "--python")
    assert_one_line_usage_error(scan(str(tmp_path), "--gpu", "Z9000"), "--gpu")


def test_a_corrupt_file_met_in_a_directory_is_a_finding(tmp_path: Path, library: Path) -> None:
    data = library.read_bytes()
    (tmp_path / "libgood.so").write_bytes(data)
    (tmp_path / "libbad.so").write_bytes(data[: fatbin_offset(data) + 40] + b"\0" * 0)  # cut inside the fat binary
    run = scan(str(tmp_path), "--gpu", "H100", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    found = json.loads(run.stdout)
    codes = sorted((f["code"], f["severity"]) for f in found["findings"])
    assert codes == [("binary-ok", "ok"), ("binary-unreadable", "warn")]
    bad = next(p for p in found["packages"] if p["binaries"][0]["error"])
    assert bad["name"] is None and bad["binaries"][0]["path"] == "libbad.so" and "truncated" in bad["binaries"][0]["error"]


def test_a_corrupt_member_of_a_wheel_is_a_finding(tmp_path: Path, library: Path) -> None:
    data = library.read_bytes()
    wheel = tmp_path / "pkg-1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("pkg/_ok.so", data)
        archive.writestr("pkg/_bad.so", patched(data, fatbin_offset(data), b"\xff\xff\xff\xff"))
        archive.writestr("pkg-1.0.dist-info/METADATA", "Name: pkg\nVersion: 1.0\n\n")
    run = scan(str(wheel), "--gpu", "RTX 5090", "--driver", "580.65.06")
    # _ok.so runs by JIT from its compute_90 PTX (ISA 8.8, CUDA 12.9 <= the driver's 13.0): warnings only
    assert run.returncode == 0, run.stdout + run.stderr
    assert "pkg 1.0 runs on the GeForce RTX 5090 only by JIT-compiling PTX" in run.stdout
    assert "pkg 1.0: pkg/_bad.so could not be read" in run.stdout


def test_a_directory_without_gpu_code_passes(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("nothing here")
    run = scan(str(tmp_path), "--gpu", "A100", "--json")
    assert run.returncode == 0
    assert [f["code"] for f in json.loads(run.stdout)["findings"]] == ["scan-no-gpu-code"]


def test_without_any_gpu_the_code_is_listed_and_nothing_fails(tmp_path: Path, library: Path) -> None:
    (tmp_path / "libhand.so").write_bytes(library.read_bytes())
    run = run_cli("scan", str(tmp_path), "--json", environment={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": str(tmp_path)})
    assert run.returncode == 0, run.stdout + run.stderr
    data = json.loads(run.stdout)
    assert data["gpus"] == [] and [f["code"] for f in data["findings"]] == ["scan-no-gpu"]
    assert data["packages"][0]["binaries"][0]["sass"] == ["sm_80", "sm_90a", "sm_80", "sm_90a"]


# ---- the front-to-back reader (tar streams) on the same files ------------------------------------


def read_forward_bytes(data: bytes, size: int | None = None) -> BinaryCode:
    from cudadoctor.binaries.stream import read_forward

    stream = Bounded(data)
    return read_forward(stream.read, len(data) if size is None else size)


def test_front_to_back_reading_finds_the_same_code(library: Path) -> None:
    data = library.read_bytes()
    assert read_forward_bytes(data) == read_bytes(data)


def test_a_stream_shorter_than_announced_is_a_one_line_error(library: Path) -> None:
    data = library.read_bytes()
    with pytest.raises(BinaryFormatError, match="the stream ended"):
        read_forward_bytes(data[: len(data) // 2], size=len(data))


def test_front_to_back_random_corruption_gives_a_listing_or_one_line(library: Path) -> None:
    data = library.read_bytes()
    at = fatbin_offset(data)
    rng = random.Random(7)
    hot = list(range(0, 64)) + list(range(at, at + 400))
    for _ in range(800):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            mutated[rng.choice(hot)] = rng.randrange(256)
        try:
            read_forward_bytes(bytes(mutated))
        except BinaryFormatError as exc:
            assert "\n" not in str(exc)


def test_a_huge_sparse_section_is_refused_after_a_bounded_read(tmp_path: Path, library: Path) -> None:
    """A 4 GiB .nv_fatbin section of zeros (a sparse file): refused after 1 MiB, not read through."""
    data = library.read_bytes()
    elf = read_elf(io.BytesIO(data), len(data))
    index = next(i for i, s in enumerate(elf.sections) if s.name == ".nv_fatbin")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    header = shoff + index * 64
    huge = tmp_path / "libhuge.so"
    huge.write_bytes(patched(data, header + 24, struct.pack("<QQ", len(data), 4 << 30)))
    with open(huge, "r+b") as stream:
        stream.truncate(len(data) + (4 << 30))

    class Counting(io.FileIO):
        asked = 0

        def read(self, count: int = -1) -> bytes:  # type: ignore[override]
            assert 0 <= count <= 1 << 20
            Counting.asked += count
            return super().read(count)

    with Counting(str(huge), "r") as stream, pytest.raises(BinaryFormatError, match="zero bytes"):
        read_binary(stream, huge.stat().st_size)
    assert Counting.asked < 4 << 20


def test_stored_and_deflated_wheel_members_are_read_alike(tmp_path: Path, library: Path) -> None:
    """A stored member is read by seeking to its headers, a deflated one front to back."""
    data = library.read_bytes()
    wheel = tmp_path / "both-1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(zipfile.ZipInfo("both/_stored.so"), data, compress_type=zipfile.ZIP_STORED)
        archive.writestr(zipfile.ZipInfo("both/_deflated.so"), data, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("both-1.0.dist-info/METADATA", "Name: both\nVersion: 1.0\n\n")
    run = scan(str(wheel), "--gpu", "A100", "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    binaries = json.loads(run.stdout)["packages"][0]["binaries"]
    assert [b["path"] for b in binaries] == ["both/_stored.so", "both/_deflated.so"]
    assert binaries[0]["sass"] == binaries[1]["sass"] == ["sm_80", "sm_90a", "sm_80", "sm_90a"]
    assert binaries[0]["needed"] == binaries[1]["needed"] and binaries[0]["cuda_runtime"] == "12"
