"""Which CUDA release introduced each PTX ISA version: a driver JIT-compiles PTX of an ISA only
when it supports that CUDA release or a newer one (older drivers answer
CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain").

Sourced data, kept with the reader that needs it, cited like the table's rows.
"""

from __future__ import annotations

from typing import Optional

SOURCE = {
    "document": "NVIDIA PTX ISA, Release Notes: PTX release history (PTX ISA version and the CUDA release that introduced it)",
    "section": "Release Notes, Table 'PTX Release History'",
    "url": "https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes-ptx-release-history",
}
EVIDENCE = (
    "release-notes: 6.0-9.1 as NVIDIA's table lists them (mirrored in NVIDIA cuda-python "
    "cuda.bindings.utils._ptx_utils); 9.2 observed: NVRTC 13.2 writes .version 9.2 (tests/test_binaries_real.py)"
)

# PTX ISA (major, minor) -> the first CUDA (major, minor) that accepts it. 8.5 served CUDA 12.5
# and 12.6; 8.6 came with 12.7, which shipped no toolkit (12.8 is the next).
PTX_ISA_TO_CUDA: dict[tuple[int, int], tuple[int, int]] = {
    (6, 0): (9, 0), (6, 1): (9, 1), (6, 2): (9, 2), (6, 3): (10, 0), (6, 4): (10, 1), (6, 5): (10, 2),
    (7, 0): (11, 0), (7, 1): (11, 1), (7, 2): (11, 2), (7, 3): (11, 3), (7, 4): (11, 4), (7, 5): (11, 5),
    (7, 6): (11, 6), (7, 7): (11, 7), (7, 8): (11, 8),
    (8, 0): (12, 0), (8, 1): (12, 1), (8, 2): (12, 2), (8, 3): (12, 3), (8, 4): (12, 4), (8, 5): (12, 5),
    (8, 6): (12, 7), (8, 7): (12, 8), (8, 8): (12, 9),
    (9, 0): (13, 0), (9, 1): (13, 1), (9, 2): (13, 2),
}  # fmt: skip


def parse_isa(text: str) -> Optional[tuple[int, int]]:
    major, _, minor = text.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return None
    return int(major), int(minor)


def cuda_for_ptx_isa(isa: str) -> Optional[tuple[int, int]]:
    """The first CUDA release whose driver can JIT PTX of this ISA; None when the ISA is newer (or
    older) than any release listed here."""
    parsed = parse_isa(isa)
    return PTX_ISA_TO_CUDA.get(parsed) if parsed is not None else None


def newer_than_known(isa: str) -> bool:
    parsed = parse_isa(isa)
    return parsed is not None and parsed > max(PTX_ISA_TO_CUDA)
