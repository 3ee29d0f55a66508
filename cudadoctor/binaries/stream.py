"""GPU code from a file that can only be read forward once: a member of a tar stream (an image's
files through the Docker archive API), where the ELF section table at the file's end cannot be
read before the sections it describes.

The reader looks for fat binary headers instead: the magic 0xBA55ED50 at an 8-byte aligned
offset (the .nv_fatbin section and each fat binary in it are 8-byte aligned), followed by version
1, a 16-byte header, a size that fits the file, and a first entry header that is well formed.
Once a header passes, its entries are walked and their payloads skipped as the seekable reader
does (fatbin.py), and a malformed entry is a BinaryFormatError. Memory stays at one window.

The few regions the ELF reader needs are kept as they stream past (the ELF and program headers at
the start, the dynamic section, the section table and the section names before it), so that at
the end the fat binaries found are kept only where they lie inside .nv_fatbin, as the seekable
reader and cuobjdump list them (libraries such as cuBLASLt also carry fat binaries in .rodata,
loaded by their own code), and DT_NEEDED is read when its strings were kept.
"""

from __future__ import annotations

import struct
from typing import Callable, Optional

from .code import BinaryCode, GpuCode
from .elf import ElfFile, needed_libraries, read_elf
from .errors import BinaryFormatError
from .fatbin import (
    ENTRY_HEADER,
    FATBIN_HEADER,
    ENTRY_MAX,
    ENTRY_MIN,
    FATBIN_MAGIC,
    MAX_ENTRIES,
    MAX_FATBINS,
    entry_code,
)

MAGIC = FATBIN_MAGIC.to_bytes(4, "little")
CHUNK = 1 << 20
HEAD = 4 << 20  # kept from the start: ELF and program headers, .dynsym/.dynstr in a usual layout
BEFORE_SECTIONS = 1 << 20  # kept before the section table: the section names lie there
REGION_MAX = 8 << 20  # any one kept region
ALIGNMENT_SLACK = 64  # bytes between fat binaries in .nv_fatbin: NVIDIA's tools leave none, assemblers align to 8 or 16
_PROGRAM = struct.Struct("<IIQQQQQQ")  # Elf64_Phdr
PT_DYNAMIC = 2


class _Kept:
    """Regions of the file kept as the stream passes them, read back like a seekable file."""

    def __init__(self, regions: list[tuple[int, int]]) -> None:
        self.regions = [(start, bytearray(end - start)) for start, end in regions if end > start]
        self.filled = [0] * len(self.regions)
        self.position = 0

    def keep(self, offset: int, data: "bytes | bytearray") -> None:
        for i, (start, buffer) in enumerate(self.regions):
            lo, hi = max(start, offset), min(start + len(buffer), offset + len(data))
            if lo < hi:
                buffer[lo - start : hi - start] = data[lo - offset : hi - offset]
                self.filled[i] += hi - lo

    def seek(self, offset: int, whence: int = 0) -> int:
        self.position = offset
        return offset

    def read(self, count: int = -1) -> bytes:
        for i, (start, buffer) in enumerate(self.regions):
            if start <= self.position and self.position + count <= start + len(buffer) and self.filled[i] >= len(buffer):
                data = bytes(buffer[self.position - start : self.position - start + count])
                self.position += count
                return data
        raise BinaryFormatError(f"the ELF reader needs bytes at {self.position} that the stream did not keep")


class _Forward:
    """A forward-only window over a stream read with read(n): a bytearray that grows at its end
    and is cut at its front only once it holds more than a chunk behind the reader (each byte is
    copied a bounded number of times)."""

    def __init__(self, read: Callable[[int], bytes], size: int) -> None:
        self.read, self.size = read, size
        self.base, self.data = 0, bytearray()
        self.kept: Optional[_Kept] = None

    def _drop(self, offset: int, data: "bytes | bytearray") -> None:
        if self.kept is not None:
            self.kept.keep(offset, data)

    def drain(self) -> None:
        """Read to the end (what is left is kept where a region asks for it)."""
        self._drop(self.base, self.data)
        self.base, self.data = self.end, bytearray()
        while self.base < self.size:
            data = self._read(min(CHUNK, self.size - self.base))
            self._drop(self.base, data)
            self.base += len(data)

    @property
    def end(self) -> int:
        return self.base + len(self.data)

    def cover(self, offset: int, count: int) -> bool:
        """Make data hold [offset, offset + count); False when the file is shorter."""
        if offset + count > self.size:
            return False
        if offset >= self.end:  # skip ahead: drop what the window holds, read and drop up to offset
            self._drop(self.base, self.data)
            self.base, self.data = self.end, bytearray()
            while self.base < offset:
                dropped = self._read(min(CHUNK, offset - self.base))
                self._drop(self.base, dropped)
                self.base += len(dropped)
        elif offset - self.base > CHUNK:
            self._drop(self.base, self.data[: offset - self.base])
            del self.data[: offset - self.base]
            self.base = offset
        while self.end < offset + count:
            self.data += self._read(max(CHUNK, offset + count - self.end))
        return True

    def _read(self, count: int) -> bytes:
        data = self.read(min(count, self.size - self.end))
        if not data:
            raise BinaryFormatError(f"truncated: the stream ended at offset {self.end}, before the {self.size} bytes it announced")
        return data


def read_forward(read: Callable[[int], bytes], size: int) -> BinaryCode:
    """The GPU code of an ELF file of ``size`` bytes read front to back through ``read(n)``.
    ``needed`` stays empty: the dynamic section's place is only in the section table at the end."""
    window = _Forward(read, size)
    if not window.cover(0, 4) or window.data[:4] != b"\x7fELF":
        raise BinaryFormatError("not an ELF file (no \\x7fELF magic)")
    window.cover(0, min(HEAD, size))
    window.kept = _Kept(_regions(bytes(window.data[: min(HEAD, size)]), size))
    found: list[tuple[int, int, int, int]] = []  # (start, end, first entry, entry count) of each fat binary
    entries: list[GpuCode] = []
    made: dict[tuple[int, int, int, int, int, int], GpuCode] = {}
    fatbins = 0
    position = 8
    while position + 16 + ENTRY_MIN <= size:
        window.cover(position, min(CHUNK, size - position))
        hit = _next_aligned(window.data, window.base, position)
        if hit < 0:
            if window.end >= size:
                break
            aligned_tail = window.end - window.end % 8 - 8  # a magic cut by the window's end is found next turn
            position = max(aligned_tail, position + 8)
            continue
        position = hit
        if not window.cover(position, 16 + ENTRY_HEADER.size) or not _plausible(window, position, size):
            position += 8
            continue
        _, _, header_size, body = FATBIN_HEADER.unpack_from(window.data, position - window.base)
        first = len(entries)
        fatbins += 1
        if fatbins > MAX_FATBINS:
            raise BinaryFormatError(f"too many fat binaries (more than {MAX_FATBINS})")
        entry_at, end = position + header_size, position + header_size + body
        while entry_at < end:
            if end - entry_at < ENTRY_MIN or not window.cover(entry_at, ENTRY_HEADER.size):
                raise BinaryFormatError(f"truncated fat binary entry at offset {entry_at}")
            fields = ENTRY_HEADER.unpack_from(window.data, entry_at - window.base)
            entry_size, payload = fields[2], fields[3]
            if not ENTRY_MIN <= entry_size <= ENTRY_MAX or payload > end - entry_at - entry_size:
                raise BinaryFormatError(f"corrupt fat binary entry at offset {entry_at}: header size {entry_size}, payload {payload}")
            code = entry_code(fields, made, entry_at)
            if code is not None:
                if len(entries) >= MAX_ENTRIES:
                    raise BinaryFormatError(f"too many fat binary entries (more than {MAX_ENTRIES})")
                entries.append(code)
            entry_at += entry_size + payload
        found.append((position, end, first, len(entries) - first))
        position = end + (-end % 8)
    window.drain()
    return _in_section(window.kept, size, found, entries)


def _regions(head: bytes, size: int) -> list[tuple[int, int]]:
    """What to keep: the head, the dynamic segment, and the section table with what precedes it."""
    regions = [(0, len(head))]
    if len(head) < 64 or head[4] != 2 or head[5] != 1:
        return regions
    phoff, shoff = struct.unpack_from("<QQ", head, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 0x36)
    if phentsize == _PROGRAM.size and phoff + phnum * _PROGRAM.size <= len(head):
        for i in range(phnum):
            kind, _, offset, _, _, filesz, _, _ = _PROGRAM.unpack_from(head, phoff + i * _PROGRAM.size)
            if kind == PT_DYNAMIC and offset < size and filesz <= REGION_MAX:
                regions.append((offset, min(offset + filesz, size)))
    if 0 < shoff < size and shentsize == 64:
        table = (shnum or 1) * 64
        regions.append((max(len(head), shoff - BEFORE_SECTIONS), min(size, shoff + min(table, REGION_MAX))))
    return regions


def _check_covered(start: int, end: int, inside: list[tuple[int, int, int, int]]) -> None:
    """The fat binaries found must fill the section, but for alignment: bytes there that no header
    accounts for are a fat binary whose header is corrupt (the seekable reader names it so too)."""
    at = start
    for begin, finish, _, _ in inside + [(end, end, 0, 0)]:
        if begin - at > ALIGNMENT_SLACK:
            raise BinaryFormatError(f"corrupt fat binary section: {begin - at} bytes at offset {at} are not a fat binary")
        at = finish


def _in_section(kept: Optional[_Kept], size: int, found: list[tuple[int, int, int, int]], entries: list[GpuCode]) -> BinaryCode:
    """The fat binaries inside .nv_fatbin, and DT_NEEDED, from the kept regions; every fat binary
    found when the section table was not kept (a file laid out unusually)."""
    elf: Optional[ElfFile] = None
    try:
        elf = read_elf(kept, size) if kept is not None else None  # type: ignore[arg-type]  # _Kept reads like a file
    except BinaryFormatError:
        elf = None
    section = elf.section(".nv_fatbin") if elf is not None else None
    if section is not None:
        inside = [f for f in found if section.offset <= f[0] and f[1] <= section.offset + section.size]
        _check_covered(section.offset, section.offset + section.size, inside)
        entries = [e for start, _, first, count in inside for e in entries[first : first + count]]
        found = inside
    needed: tuple[str, ...] = ()
    if elf is not None:
        try:
            needed = needed_libraries(kept, elf)  # type: ignore[arg-type]
        except BinaryFormatError:
            needed = ()
    return BinaryCode(entries=tuple(entries), needed=needed, fatbins=len(found))


def _next_aligned(data: bytearray, base: int, start: int) -> int:
    """The offset of the first magic at an 8-aligned offset >= start in data, else -1."""
    index = data.find(MAGIC, start - base)
    while index >= 0:
        if (base + index) % 8 == 0:
            return base + index
        index = data.find(MAGIC, index + 1)
    return -1


def _plausible(window: _Forward, position: int, size: int) -> bool:
    """A fat binary header here, not four bytes that happen to match: version 1, a 16-byte header,
    a body that fits the file, and a first entry header of a known size and a payload that fits."""
    magic, version, header_size, body = FATBIN_HEADER.unpack_from(window.data, position - window.base)
    if magic != FATBIN_MAGIC or version != 1 or header_size != 16 or body < ENTRY_MIN or body > size - position - 16:
        return False
    kind, entry_version, entry_size, payload = ENTRY_HEADER.unpack_from(window.data, position + 16 - window.base)[:4]
    return bool(entry_version == 0x0101 and 0 < kind < 0x1000 and ENTRY_MIN <= entry_size <= ENTRY_MAX and payload <= body - entry_size)
