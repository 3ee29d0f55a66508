"""Whether a binary's GPU code runs on a GPU, under a driver: natively from SASS, by JIT from PTX,
or not at all ("no kernel image is available for execution on the device").

The rules are NVIDIA's (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX
Compatibility"; the Blackwell guide for the "a" and "f" targets): SASS for sm_X.Y runs on
compute capability X.Z with Z >= Y, an "a" build only on X.Y itself, an "f" build on its family
(same major, equal or higher minor); PTX for compute_X.Y is JIT-compiled for any GPU of X.Y or
newer ("a" PTX only for X.Y, "f" PTX only within its major), when the driver supports the CUDA
release that introduced the PTX's ISA.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..model.record import record
from .code import PTX, SASS, BinaryCode, GpuCode
from .ptx_isa import PTX_ISA_TO_CUDA, cuda_for_ptx_isa, newer_than_known

NATIVE = "native"
JIT = "jit"
PTX_TOO_NEW = "ptx-too-new"  # only PTX fits, and this driver cannot JIT its ISA
NO_KERNEL_IMAGE = "no-kernel-image"
RUNS = (NATIVE, JIT)

CC = tuple[int, int]


@record
class CodeVerdict:
    """How one binary's GPU code meets one GPU."""

    status: str  # native | jit | ptx-too-new | no-kernel-image
    used: Optional[GpuCode]  # the entry that runs (or the PTX the driver cannot JIT)
    needs_cuda: Optional[str] = None  # for ptx-too-new / a JIT whose driver is unknown: "13.2"

    @property
    def runs(self) -> bool:
        return self.status in RUNS


def parse_cc(text: str) -> Optional[CC]:
    major, _, minor = text.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        return None
    return int(major), int(minor)


def sass_runs_on(entry: GpuCode, gpu: CC) -> bool:
    built = (entry.major, entry.minor)
    if entry.suffix == "a":
        return built == gpu
    return entry.major == gpu[0] and entry.minor <= gpu[1]


def ptx_fits(entry: GpuCode, gpu: CC) -> bool:
    built = (entry.major, entry.minor)
    if entry.suffix == "a":
        return built == gpu
    if entry.suffix == "f":
        return entry.major == gpu[0] and entry.minor <= gpu[1]
    return built <= gpu


def driver_can_jit(entry: GpuCode, driver_cuda: Optional[CC]) -> Optional[bool]:
    """Whether this driver can JIT the PTX's ISA: None when the driver's CUDA is unknown, or the
    ISA is newer than any release listed while the driver is newer than those too."""
    if driver_cuda is None:
        return None
    needs = cuda_for_ptx_isa(entry.ptx_isa or "")
    if needs is not None:
        return needs <= driver_cuda
    if newer_than_known(entry.ptx_isa or ""):
        return None if driver_cuda > max(PTX_ISA_TO_CUDA.values()) else False
    return None


def judge_code(code: BinaryCode, gpu: CC, driver_cuda: Optional[CC]) -> CodeVerdict:
    """The best way this binary's code runs on the GPU: SASS first (what the driver picks), then
    PTX the driver can JIT. A PTX of an ISA newer than any known release counts as too new."""
    for entry in code.entries:
        if entry.kind == SASS and sass_runs_on(entry, gpu):
            return CodeVerdict(status=NATIVE, used=entry)
    fitting = sorted((e for e in code.entries if e.kind == PTX and ptx_fits(e, gpu)), key=lambda e: (e.arch, e.ptx_isa or ""), reverse=True)
    too_new: Optional[GpuCode] = None
    for entry in fitting:
        can = driver_can_jit(entry, driver_cuda)
        if can is not False:
            return CodeVerdict(status=JIT, used=entry, needs_cuda=_needs(entry) if can is None else None)
        too_new = too_new or entry
    if too_new is not None:
        return CodeVerdict(status=PTX_TOO_NEW, used=too_new, needs_cuda=_needs(too_new))
    return CodeVerdict(status=NO_KERNEL_IMAGE, used=None)


def _needs(entry: GpuCode) -> Optional[str]:
    needs = cuda_for_ptx_isa(entry.ptx_isa or "")
    return f"{needs[0]}.{needs[1]}" if needs else None


def arch_list(entries: Sequence[GpuCode]) -> str:
    """sm_80 sm_90 compute_90: the targets in the order nvcc's -gencode names them, each once."""
    seen: dict[str, None] = {}
    for entry in sorted(entries, key=lambda e: (e.arch, e.suffix, e.kind == PTX)):
        seen[entry.sm if entry.kind == SASS else entry.compute] = None
    return " ".join(seen)
