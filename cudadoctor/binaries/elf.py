"""ELF64 files: the header, the section table, one section's place, and DT_NEEDED.

Reads from a seekable binary stream the caller opened, with the file's size given, so that every
offset and count in the file is checked against the file before it is used; nothing is read that
the header did not bound, and every count and size is capped (a hostile file cannot make the
reader allocate or loop without end). Only little-endian 64-bit files are read: CUDA builds no
GPU code for anything else.
"""

from __future__ import annotations

import struct
from typing import BinaryIO, Optional

from ..model.record import record
from .errors import BinaryFormatError

ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
SHT_NULL = 0
SHT_NOBITS = 8
SHT_DYNAMIC = 6
DT_NULL = 0
DT_NEEDED = 1
SHN_XINDEX = 0xFFFF

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr, 64 bytes
_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr, 64 bytes
_DYN = struct.Struct("<qQ")  # Elf64_Dyn, 16 bytes

MAX_SECTIONS = 65_536  # a real library has tens; linkers cap at this without extended numbering tricks
MAX_NAMES = 4 << 20  # the section-name table (bytes)
MAX_DYNAMIC = 16_384  # dynamic entries
MAX_NAME = 4096  # one library name in .dynstr
MAX_NEEDED = 1024


@record
class Section:
    """One section's name and where its bytes lie in the file."""

    name: str
    type: int
    offset: int
    size: int
    link: int


@record
class ElfFile:
    """The sections of an ELF64 file (empty for a file of another class: no GPU code there)."""

    size: int
    sections: tuple[Section, ...]
    is_elf64: bool

    def section(self, name: str) -> Optional[Section]:
        for section in self.sections:
            if section.name == name:
                return section
        return None


def read_exact(stream: BinaryIO, offset: int, count: int, what: str) -> bytes:
    """count bytes at offset, or BinaryFormatError naming what was cut short."""
    stream.seek(offset)
    data = stream.read(count)
    if len(data) != count:
        raise BinaryFormatError(f"truncated: {what} at offset {offset} needs {count} bytes, the file has {len(data)}")
    return data


def is_elf(head: bytes) -> bool:
    return head[:4] == ELF_MAGIC


def read_elf(stream: BinaryIO, size: int) -> ElfFile:
    """The section table of an ELF file whose size is known."""
    if size < _HEADER.size:
        raise BinaryFormatError(f"truncated: {size} bytes is shorter than an ELF header")
    header = read_exact(stream, 0, _HEADER.size, "the ELF header")
    ident = header[:16]
    if not is_elf(ident):
        raise BinaryFormatError("not an ELF file (no \\x7fELF magic)")
    if ident[4] != ELFCLASS64 or ident[5] != ELFDATA2LSB:
        return ElfFile(size=size, sections=(), is_elf64=False)
    (_, _, _, _, _, _, shoff, _, _, _, _, shentsize, shnum, shstrndx) = _HEADER.unpack(header)
    if shoff == 0:
        return ElfFile(size=size, sections=(), is_elf64=True)  # stripped of its section table
    if shentsize != _SECTION.size:
        raise BinaryFormatError(f"corrupt ELF header: section header size {shentsize}, expected {_SECTION.size}")
    first = _section_header(stream, size, shoff, 0)
    if shnum == 0:  # extended numbering: the count is in section 0's size
        shnum = first[5]
    if shstrndx == SHN_XINDEX:
        shstrndx = first[6]
    if shnum > MAX_SECTIONS:
        raise BinaryFormatError(f"too many sections ({shnum}; at most {MAX_SECTIONS} are read)")
    end = shoff + shnum * _SECTION.size
    if end > size:
        raise BinaryFormatError(f"truncated: the section table ends at {end}, past the end of the file ({size} bytes)")
    table = read_exact(stream, shoff, shnum * _SECTION.size, "the section table")
    raw = [_SECTION.unpack_from(table, i * _SECTION.size) for i in range(shnum)]
    if shnum and not 0 <= shstrndx < shnum:
        raise BinaryFormatError(f"corrupt ELF header: section-name table index {shstrndx} of {shnum} sections")
    names = b""
    if shnum:
        names_header = raw[shstrndx]
        _check_range(names_header, size, "the section-name table")
        if names_header[5] > MAX_NAMES:
            raise BinaryFormatError(f"section-name table too large ({names_header[5]} bytes; at most {MAX_NAMES})")
        names = read_exact(stream, names_header[4], names_header[5], "the section-name table") if names_header[1] != SHT_NOBITS else b""
    sections = []
    for index, (name_at, kind, _, _, offset, length, link, _, _, _) in enumerate(raw):
        if kind in (SHT_NULL, SHT_NOBITS):  # no bytes in the file (section 0 is SHT_NULL)
            length = 0
        else:
            _check_range(raw[index], size, f"section {index}")
        sections.append(Section(name=_name(names, name_at), type=kind, offset=offset, size=length, link=link))
    return ElfFile(size=size, sections=tuple(sections), is_elf64=True)


def needed_libraries(stream: BinaryIO, elf: ElfFile) -> tuple[str, ...]:
    """The DT_NEEDED names of the dynamic section, in order (empty for a static file)."""
    dynamic = next((s for s in elf.sections if s.type == SHT_DYNAMIC), None)
    if dynamic is None or dynamic.size == 0:
        return ()
    count = min(dynamic.size // _DYN.size, MAX_DYNAMIC)
    if not 0 <= dynamic.link < len(elf.sections):
        raise BinaryFormatError(f"corrupt dynamic section: its string table is section {dynamic.link} of {len(elf.sections)}")
    strings = elf.sections[dynamic.link]
    data = read_exact(stream, dynamic.offset, count * _DYN.size, "the dynamic section")
    offsets = []
    for i in range(count):
        tag, value = _DYN.unpack_from(data, i * _DYN.size)
        if tag == DT_NULL:
            break
        if tag == DT_NEEDED:
            if value >= strings.size:
                raise BinaryFormatError(f"corrupt dynamic section: a DT_NEEDED name at {value}, past its string table ({strings.size} bytes)")
            offsets.append(value)
            if len(offsets) > MAX_NEEDED:
                raise BinaryFormatError(f"too many DT_NEEDED entries (more than {MAX_NEEDED})")
    return tuple(_string_at(stream, strings, at) for at in offsets)


def _section_header(stream: BinaryIO, size: int, shoff: int, index: int) -> tuple[int, ...]:
    at = shoff + index * _SECTION.size
    if at + _SECTION.size > size:
        raise BinaryFormatError(f"truncated: the section table at {shoff} lies past the end of the file ({size} bytes)")
    values: tuple[int, ...] = _SECTION.unpack(read_exact(stream, at, _SECTION.size, "a section header"))
    return values


def _check_range(header: tuple[int, ...], size: int, what: str) -> None:
    offset, length = header[4], header[5]
    if offset > size or length > size - offset:
        raise BinaryFormatError(f"truncated: {what} ({length} bytes at {offset}) runs past the end of the file ({size} bytes)")


def _name(names: bytes, at: int) -> str:
    if at >= len(names):
        return ""
    end = names.find(b"\0", at)
    return names[at : end if end >= 0 else len(names)].decode("latin-1")


def _string_at(stream: BinaryIO, strings: Section, at: int) -> str:
    length = min(MAX_NAME, strings.size - at)
    data = read_exact(stream, strings.offset + at, length, "a library name")
    end = data.find(b"\0")
    if end < 0:
        raise BinaryFormatError(f"corrupt dynamic string table: a name at {at} has no end within {MAX_NAME} bytes")
    return data[:end].decode("utf-8", "replace")
