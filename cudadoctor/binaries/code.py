"""What the readers found in a binary: its GPU code entries, and the CUDA runtime it links."""

from __future__ import annotations

from typing import Optional

from ..model.record import record

SASS = "sass"  # machine code (an ELF cubin) for one architecture
PTX = "ptx"  # virtual assembly that the driver JIT-compiles for the GPU it runs on


@record
class GpuCode:
    """One entry of a fat binary: SASS or PTX for one architecture.

    ``arch`` is the compute capability as NVIDIA writes it in an sm name (80 for sm_80, 120 for
    sm_120); ``suffix`` is "a" for architecture-specific code (sm_90a: only that exact GPU), "f"
    for family-specific code (sm_100f: the GPUs of that family), "" otherwise. ``ptx_isa`` is the
    PTX ISA version ("8.8") of a PTX entry, None for SASS.
    """

    kind: str
    arch: int
    suffix: str
    ptx_isa: Optional[str]
    compressed: bool

    @property
    def major(self) -> int:
        return self.arch // 10

    @property
    def minor(self) -> int:
        return self.arch % 10

    @property
    def sm(self) -> str:
        """sm_80, sm_90a, sm_120f: the name NVIDIA's tools give the target."""
        return f"sm_{self.arch}{self.suffix}"

    @property
    def compute(self) -> str:
        """compute_90: the name of a PTX target."""
        return f"compute_{self.arch}{self.suffix}"


@record
class BinaryCode:
    """The GPU code of one ELF file, in the order its fat binaries list it, and what it links."""

    entries: tuple[GpuCode, ...]
    needed: tuple[str, ...]  # DT_NEEDED: the shared libraries the loader maps with it
    fatbins: int  # how many fat binaries its .nv_fatbin section holds

    @property
    def has_gpu_code(self) -> bool:
        return bool(self.entries)

    @property
    def cuda_runtime(self) -> Optional[str]:
        """The CUDA runtime major it links ("12" for libcudart.so.12), None when it links none."""
        for name in self.needed:
            if name.startswith("libcudart.so."):
                return name[len("libcudart.so.") :].split(".")[0] or None
        return None

    def sass(self) -> tuple[GpuCode, ...]:
        return tuple(e for e in self.entries if e.kind == SASS)

    def ptx(self) -> tuple[GpuCode, ...]:
        return tuple(e for e in self.entries if e.kind == PTX)
