"""One ELF file's GPU code: its .nv_fatbin section read through, and what it links."""

from __future__ import annotations

from typing import BinaryIO

from .code import BinaryCode
from .elf import needed_libraries, read_elf
from .fatbin import read_fatbins

FATBIN_SECTION = ".nv_fatbin"


def read_binary(stream: BinaryIO, size: int) -> BinaryCode:
    """The GPU code of the ELF file in stream (size bytes long); BinaryFormatError when the file
    is not one, or is cut short or corrupt."""
    elf = read_elf(stream, size)
    # The dynamic section lies before the fat binaries: reading it first keeps a compressed
    # wheel member, which seeks backwards only by decompressing again, to one pass after the
    # section table at the file's end.
    needed = needed_libraries(stream, elf)
    section = elf.section(FATBIN_SECTION)
    entries, fatbins = read_fatbins(stream, section.offset, section.size) if section is not None else ((), 0)
    return BinaryCode(entries=entries, needed=needed, fatbins=fatbins)
