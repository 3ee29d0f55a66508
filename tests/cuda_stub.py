"""Build and configure the stand-in libcuda.so.1 (tests/fake_cuda/fake_cuda.c).

Like tests/nvml_stub.py: a process whose LD_LIBRARY_PATH holds the directory built here loads the
stub through ctypes, which answers cuDriverGetVersion from the file named by FAKE_CUDA_CONFIG.
"""

from __future__ import annotations

import ctypes.util
import subprocess
from pathlib import Path
from typing import Any, Callable, Union

import nvml_stub

SOURCE = Path(__file__).resolve().parent / "fake_cuda" / "fake_cuda.c"
LIBRARY_NAME = "libcuda.so.1"


def build_fake_cuda(directory: Union[str, Path]) -> Path:
    gcc = nvml_stub.gcc_path()
    if gcc is None:
        raise nvml_stub.FakeNvmlBuildError("gcc not found on PATH; cannot build the stand-in libcuda.so.1")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    command = [gcc, "-Wall", "-Wextra", "-O1", "-shared", "-fPIC", f"-Wl,-soname,{LIBRARY_NAME}",
               "-o", str(directory / LIBRARY_NAME), str(SOURCE)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise nvml_stub.FakeNvmlBuildError(f"gcc failed ({result.returncode}): {result.stderr.strip()}")
    return directory


def system_libcuda_visible() -> bool:
    """A real libcuda.so.1 is installed (a GPU machine): tests that need it absent must skip."""
    return ctypes.util.find_library("cuda") is not None


def stand_in_env(fake_nvml_env: Callable[[dict[str, Any]], dict[str, str]], fake_cuda_lib: Path, tmp_path: Path,
                 cuda_config: dict[str, Any], nvml_config: dict[str, Any]) -> dict[str, str]:
    """The variables of a host whose NVML is the stand-in told ``nvml_config`` and whose libcuda is
    this one told ``cuda_config`` (the fixtures fake_nvml_env and fake_cuda_lib of tests/conftest.py)."""
    env = fake_nvml_env(nvml_config)
    config = nvml_stub.write_config(tmp_path / "cuda.conf", cuda_config)
    return {**env, "LD_LIBRARY_PATH": f"{env['LD_LIBRARY_PATH']}:{fake_cuda_lib}", "FAKE_CUDA_CONFIG": str(config)}
