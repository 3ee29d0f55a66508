"""The GPU code a binary really carries, read from its CUDA fat binaries.

Pure readers over a seekable binary stream that the caller opened (a file, a member of a wheel):
``elf`` reads an ELF64 file's headers, its ``.nv_fatbin`` section and ``DT_NEEDED``; ``fatbin``
reads the fat binary headers and entry headers in that section and skips every payload by the
sizes the headers give; ``code`` holds what they read; ``judge`` decides, for a GPU and a driver,
whether that code runs natively, by JIT from PTX, or not at all. Every malformed input is a
``BinaryFormatError`` with a one-line message; no read is unbounded.
"""
