"""CUDA fat binaries: the headers in an ELF file's ``.nv_fatbin`` section.

The section holds one or more fat binaries, each a 16-byte header (magic 0xBA55ED50, version 1,
its header size, and the size of what follows) and then entries back to back; an entry is a
header (kind, its own size, the payload's size, the code's version, the architecture, flags)
followed by its payload. The reader reads each header and seeks past each payload, so a section of
hundreds of megabytes costs a few thousand small reads. Layout learned from NVIDIA's tools'
output on files they made (cuobjdump is the tests' oracle) and public descriptions of the format.

Entry header fields (little-endian): 0 u16 kind (1 PTX, 2 ELF cubin), 4 u32 header size,
8 u64 payload size, 16 u32 compressed size, 24 u16 minor, 26 u16 major (the PTX ISA version
of a PTX entry), 28 u32 arch (80 for sm_80), 40 u64 flags (0x2000 and 0x8000: compressed;
0x100000: architecture-specific "a"; 0x200000: family-specific "f").
"""

from __future__ import annotations

import struct
from typing import BinaryIO, Optional

from .code import PTX, SASS, GpuCode
from .errors import BinaryFormatError

FATBIN_MAGIC = 0xBA55ED50
FATBIN_HEADER = struct.Struct("<IHHQ")  # magic, version, header size, size of the entries
ENTRY_HEADER = struct.Struct("<HHIQIIHHIIIQ")  # the first 48 bytes of an entry header
ENTRY_MIN = 64  # the smallest entry header NVIDIA's tools write
ENTRY_MAX = 64 * 1024  # an entry header holds a name and options: kilobytes at most
HEADER_MAX = 4096

KIND_PTX = 1
KIND_ELF = 2
FLAG_COMPRESSED = 0x2000 | 0x8000  # the older and the newer compression (CUDA 12.8+ writes 0x8000)
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY_SPECIFIC = 0x200000

MAX_FATBINS = 200_000  # libcublasLt, among the largest, holds a few thousand
MAX_ENTRIES = 1_000_000
MAX_PADDING = 1 << 20  # zeros between two fat binaries: alignment, a few bytes in real files


WINDOW = 512  # bytes read at a time: a fat binary header, its padding and the first entry header in one read


class _Window:
    """Reads of the section through a small window: each read fetches WINDOW bytes (never past
    the section's end), so the headers that lie together cost one system call, not several."""

    def __init__(self, stream: BinaryIO, end: int) -> None:
        self.stream, self.end = stream, end
        self.base, self.data = 0, b""

    def at(self, offset: int, count: int) -> tuple[bytes, int]:
        """(buffer, index): count bytes at offset are buffer[index:index + count]."""
        index = offset - self.base
        if 0 <= index and index + count <= len(self.data):
            return self.data, index
        length = min(max(count, WINDOW), self.end - offset)
        self.stream.seek(offset)
        data = self.stream.read(length) if length >= count else b""
        if len(data) < count:
            raise BinaryFormatError(f"truncated: the file ends inside the fat binary at offset {offset}")
        self.base, self.data = offset, data
        return data, 0


def read_fatbins(stream: BinaryIO, offset: int, size: int) -> tuple[tuple[GpuCode, ...], int]:
    """The entries of every fat binary in ``size`` bytes at ``offset``, and how many fat binaries
    there were. Zero bytes between fat binaries are padding; anything else is an error."""
    end = offset + size
    window = _Window(stream, end)
    position = offset
    entries: list[GpuCode] = []
    made: dict[tuple[int, int, int, int, int, int], GpuCode] = {}  # a library repeats a few kinds of entry thousands of times
    fatbins = 0
    while position < end:
        position = _skip_padding(window, position, end)
        if position >= end:
            break
        if end - position < FATBIN_HEADER.size:
            raise BinaryFormatError(f"truncated fat binary at offset {position}: {end - position} bytes left for a 16-byte header")
        magic, version, header_size, body = FATBIN_HEADER.unpack_from(*window.at(position, FATBIN_HEADER.size))
        if magic != FATBIN_MAGIC:
            raise BinaryFormatError(f"corrupt fat binary at offset {position}: magic {magic:#010x}, expected {FATBIN_MAGIC:#010x}")
        if version != 1 or not FATBIN_HEADER.size <= header_size <= HEADER_MAX:
            raise BinaryFormatError(f"corrupt fat binary at offset {position}: version {version}, header size {header_size}")
        start = position + header_size
        if start > end or body > end - start:
            raise BinaryFormatError(f"truncated fat binary at offset {position}: it claims {body} bytes, the section has {max(end - start, 0)}")
        fatbins += 1
        if fatbins > MAX_FATBINS:
            raise BinaryFormatError(f"too many fat binaries (more than {MAX_FATBINS})")
        _read_entries(window, start, start + body, entries, made)
        position = start + body
    return tuple(entries), fatbins


def _read_entries(window: _Window, position: int, end: int, into: list[GpuCode], made: dict[tuple[int, int, int, int, int, int], GpuCode]) -> None:
    while position < end:
        if end - position < ENTRY_MIN:
            raise BinaryFormatError(f"truncated fat binary entry at offset {position}: {end - position} bytes left for a {ENTRY_MIN}-byte header")
        index = position - window.base  # the window's fast path, inlined: this loop runs once per entry
        if index < 0 or index + ENTRY_HEADER.size > len(window.data):
            data, index = window.at(position, ENTRY_HEADER.size)
        else:
            data = window.data
        fields = ENTRY_HEADER.unpack_from(data, index)
        header_size, payload = fields[2], fields[3]
        if not ENTRY_MIN <= header_size <= ENTRY_MAX:
            raise BinaryFormatError(f"corrupt fat binary entry at offset {position}: header size {header_size}")
        if payload > end - position - header_size:
            raise BinaryFormatError(
                f"truncated fat binary entry at offset {position}: its payload of {payload} bytes runs past its fat binary"
            )
        entry = entry_code(fields, made, position)
        if entry is not None:
            if len(into) >= MAX_ENTRIES:
                raise BinaryFormatError(f"too many fat binary entries (more than {MAX_ENTRIES})")
            into.append(entry)
        # other kinds (LTO-IR, index entries) carry no code a GPU loads: skipped by their sizes
        position += header_size + payload  # header_size >= 64: every turn advances


def entry_code(fields: tuple[int, ...], made: dict[tuple[int, int, int, int, int, int], GpuCode], position: int) -> Optional[GpuCode]:
    """The GpuCode of an entry header's fields (as ENTRY_HEADER unpacks them), None for a kind that
    holds no code a GPU loads; one record per distinct kind of entry, kept in made."""
    kind, minor, major, arch, flags = fields[0], fields[6], fields[7], fields[8], fields[11]
    if kind not in (KIND_PTX, KIND_ELF):
        return None
    key = (kind, arch, major, minor, flags & (FLAG_ARCH_SPECIFIC | FLAG_FAMILY_SPECIFIC), flags & FLAG_COMPRESSED)
    entry = made.get(key)
    if entry is None:
        if not 0 < arch < 10_000:
            raise BinaryFormatError(f"corrupt fat binary entry at offset {position}: architecture {arch}")
        entry = made[key] = GpuCode(
            kind=PTX if kind == KIND_PTX else SASS,
            arch=arch,
            suffix="a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY_SPECIFIC else "",
            ptx_isa=f"{major}.{minor}" if kind == KIND_PTX else None,
            compressed=bool(flags & FLAG_COMPRESSED),
        )
    return entry


def _skip_padding(window: _Window, position: int, end: int) -> int:
    """The offset of the first non-zero byte at or after position (end when there is none)."""
    start = position
    while position < end:
        if position - start > MAX_PADDING:
            raise BinaryFormatError(f"corrupt fat binary section: more than {MAX_PADDING} zero bytes at offset {start}")
        data, index = window.at(position, min(16, end - position))
        if data[index]:
            return position
        chunk = data[index:]
        stripped = len(chunk) - len(chunk.lstrip(b"\0"))
        if stripped < len(chunk):
            return position + stripped
        position += len(chunk)
    return end
