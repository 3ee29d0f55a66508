"""GPU code made by NVIDIA's own libraries, without a GPU, and NVIDIA's cuobjdump as the oracle.

NVRTC (CUDA C++ to PTX and to a cubin of SASS) and nvFatbin (the fat binary itself) are called
through ctypes from the wheels NVIDIA publishes on the package registry (.ci/run installs them:
nvidia-cuda-nvrtc, nvidia-nvfatbin, nvidia-cuda-cuobjdump, nvidia-curand-cu12); gcc wraps a fat
binary into an extension-like shared object with a .nv_fatbin section, as nvcc lays it out (the
section, plus the .nvFatBinSegment wrappers that point at each fat binary, which cuobjdump reads).

Without those wheels the tests that need them skip, saying which is missing; with
CUDADOCTOR_TEST_REQUIRE_NVIDIA_WHEELS=1 (CI) a missing wheel fails instead.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import re
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import pytest

REQUIRE_ENV = "CUDADOCTOR_TEST_REQUIRE_NVIDIA_WHEELS"

KERNEL = b"""
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


def _nvidia_dirs() -> list[str]:
    spec = importlib.util.find_spec("nvidia")
    return list(spec.submodule_search_locations or []) if spec is not None else []


def _find(pattern: str) -> Optional[str]:
    for base in _nvidia_dirs():
        hits = sorted(glob.glob(os.path.join(base, "**", pattern), recursive=True))
        if hits:
            return hits[-1]
    return None


@dataclass(frozen=True)
class NvidiaTools:
    nvrtc: str
    nvfatbin: str
    cuobjdump: str
    curand: str


def nvidia_tools() -> NvidiaTools:
    """The NVIDIA libraries and tools the tests use, or a skip (a failure under REQUIRE_ENV)."""
    wanted = {
        "nvrtc": ("libnvrtc.so.*[0-9]", "nvidia-cuda-nvrtc"),
        "nvfatbin": ("libnvfatbin.so.*[0-9]", "nvidia-nvfatbin"),
        "cuobjdump": ("cuobjdump", "nvidia-cuda-cuobjdump"),
        "curand": ("libcurand.so.*[0-9]", "nvidia-curand-cu12"),
    }
    found = {}
    missing = []
    for key, (pattern, wheel) in wanted.items():
        path = _find(pattern)
        if path is None:
            missing.append(wheel)
        else:
            found[key] = path
    if missing:
        message = f"NVIDIA wheels not installed: {', '.join(missing)} (pip install {' '.join(missing)})"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(message)
        pytest.skip(message)
    return NvidiaTools(**found)


class Nvrtc:
    def __init__(self, path: str) -> None:
        self.lib = ctypes.CDLL(path)

    def compile(self, arch: str) -> bytes:
        """sm_XY gives a cubin (SASS); compute_XY gives PTX."""
        program = ctypes.c_void_p()
        assert self.lib.nvrtcCreateProgram(ctypes.byref(program), KERNEL, b"kernel.cu", 0, None, None) == 0
        try:
            options = (ctypes.c_char_p * 1)(f"--gpu-architecture={arch}".encode())
            if self.lib.nvrtcCompileProgram(program, 1, options) != 0:
                size = ctypes.c_size_t()
                self.lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
                log = ctypes.create_string_buffer(size.value)
                self.lib.nvrtcGetProgramLog(program, log)
                raise AssertionError(f"NVRTC could not compile for {arch}: {log.value.decode(errors='replace')}")
            size = ctypes.c_size_t()
            cubin = arch.startswith("sm_")
            (self.lib.nvrtcGetCUBINSize if cubin else self.lib.nvrtcGetPTXSize)(program, ctypes.byref(size))
            out = ctypes.create_string_buffer(size.value)
            assert (self.lib.nvrtcGetCUBIN if cubin else self.lib.nvrtcGetPTX)(program, out) == 0
            return out.raw[: size.value - (0 if cubin else 1)]  # PTX: without its trailing NUL
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(program))


class NvFatbin:
    def __init__(self, path: str) -> None:
        self.lib = ctypes.CDLL(path)

    def build(self, nvrtc: Nvrtc, targets: Sequence[str], options: Sequence[str] = ()) -> bytes:
        """A fat binary of the targets, each 'sm_XY' (SASS) or 'compute_XY' (PTX), in order."""
        handle = ctypes.c_void_p()
        opts = (ctypes.c_char_p * max(len(options), 1))(*[o.encode() for o in options])
        assert self.lib.nvFatbinCreate(ctypes.byref(handle), opts, len(options)) == 0
        try:
            for target in targets:
                code = nvrtc.compile(target)
                arch = target.split("_", 1)[1].encode()
                if target.startswith("sm_"):
                    result = self.lib.nvFatbinAddCubin(handle, code, len(code), arch, b"kernel")
                else:
                    result = self.lib.nvFatbinAddPTX(handle, code, len(code), arch, b"kernel", b"")
                assert result == 0, f"nvFatbin refused {target}: error {result}"
            size = ctypes.c_size_t()
            assert self.lib.nvFatbinSize(handle, ctypes.byref(size)) == 0
            out = ctypes.create_string_buffer(size.value)
            assert self.lib.nvFatbinGet(handle, out) == 0
            return out.raw
        finally:
            self.lib.nvFatbinDestroy(ctypes.byref(handle))


def fake_cudart(directory: Path, soname: str = "libcudart.so.12") -> Path:
    """A stand-in CUDA runtime to link against, so the extension's DT_NEEDED names it."""
    source = directory / "cudart_stub.c"
    source.write_text("int cudart_stub(void) { return 0; }\n")
    out = directory / soname
    subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(out), str(source)], check=True)
    return out


def wrap_shared_object(directory: Path, name: str, fatbins: Sequence[bytes], cudart: Optional[str] = "libcudart.so.12") -> Path:
    """An extension-like shared object whose .nv_fatbin section holds the fat binaries."""
    directory.mkdir(parents=True, exist_ok=True)
    blobs = []
    for i, data in enumerate(fatbins):
        blob = directory / f"{name}.{i}.fatbin"
        blob.write_bytes(data)
        blobs.append(blob)
    labels = "".join(f".balign 16\ncudadoctor_fatbin_{i}:\n.incbin \"{blob}\"\n" for i, blob in enumerate(blobs))
    wrappers = "".join(f".long 0x466243b1, 1\n.quad cudadoctor_fatbin_{i}, 0\n" for i in range(len(blobs)))
    assembly = f'.section .nv_fatbin, "a"\n{labels}.section .nvFatBinSegment, "aw"\n.balign 8\n{wrappers}.text\n'
    source = directory / f"{name}.c"
    source.write_text(f"__asm__({_c_string(assembly)});\nint {re.sub(r'[^A-Za-z0-9_]', '_', name)}_entry(void) {{ return 1; }}\n")
    out = directory / name
    command = ["gcc", "-shared", "-fPIC", "-o", str(out), str(source)]
    if cudart:
        stub_dir = directory / ".cudart"
        stub_dir.mkdir(exist_ok=True)
        fake_cudart(stub_dir, cudart)
        command += [f"-L{stub_dir}", "-Wl,--no-as-needed", f"-l:{cudart}"]
    subprocess.run(command, check=True)
    return out


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


CUOBJDUMP_LINE = re.compile(r"^(ELF|PTX) file\s+\d+: .*\.(sm_\d+[af]?)\.(?:cubin|ptx)$")


def cuobjdump_listing(cuobjdump: str, path: Path) -> list[tuple[str, str]]:
    """(kind, target) per entry as `cuobjdump --list-elf --list-ptx` prints them, in order."""
    done = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", str(path)], capture_output=True, text=True, timeout=120)
    listing = []
    for line in done.stdout.splitlines():
        match = CUOBJDUMP_LINE.match(line.strip())
        if match:
            listing.append(("sass" if match.group(1) == "ELF" else "ptx", match.group(2)))
    return listing


def reader_listing(path: Path) -> list[tuple[str, str]]:
    """The same listing from cudadoctor's reader. cuobjdump names a family-specific cubin
    (sm_100f) by its base target (sm_100) while it names family PTX in full (sm_120f): the
    reader keeps the suffix, so it is dropped here for SASS only, to compare like with like."""
    from cudadoctor.binaries.read import read_binary

    with open(path, "rb") as stream:
        code = read_binary(stream, path.stat().st_size)
    return [(e.kind, e.sm if not (e.kind == "sass" and e.suffix == "f") else f"sm_{e.arch}") for e in code.entries]


# ---- fat binaries written by hand, for the malformed and hostile cases -----------------------


def entry_bytes(kind: int, arch: int, payload: bytes, major: int = 1, minor: int = 8, flags: int = 0x11, header_size: int = 64,
                payload_size: Optional[int] = None) -> bytes:  # fmt: skip
    """One fat binary entry as NVIDIA's tools lay it out (see cudadoctor/binaries/fatbin.py)."""
    size = len(payload) if payload_size is None else payload_size
    head = struct.pack("<HHIQIIHHIIIQ", kind, 0x0101, header_size, size, 0, 0, minor, major, arch, 0, 0, flags)
    return head + b"\0" * (max(header_size, 48) - len(head)) + payload


def fatbin_bytes(entries: Sequence[bytes], body_size: Optional[int] = None, magic: int = 0xBA55ED50, version: int = 1) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", magic, version, 16, len(body) if body_size is None else body_size) + body
