"""Build and configure the stand-in libnvidia-ml.so.1 (tests/fake_nvml/fake_nvml.c).

The real nvidia-ml-py bindings load whatever ``libnvidia-ml.so.1`` the dynamic loader finds, so a
process started with ``LD_LIBRARY_PATH`` pointing at the directory built here talks to the stub,
which answers from the key=value file named by ``FAKE_NVML_CONFIG`` (keys documented at the top of
the C file). The loader reads ``LD_LIBRARY_PATH`` at process start and pynvml keeps the library it
loaded, so the code under test must run in a fresh subprocess.

Used by tests/conftest.py and reusable from benchmarks::

    env = prepare_fake_host(Path("/tmp/fakehost"))            # builds the stub, writes 8 GPUs
    subprocess.run([...], env={**os.environ, **env})
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Mapping, Optional, Union

SOURCE = Path(__file__).resolve().parent / "fake_nvml" / "fake_nvml.c"
LIBRARY_NAME = "libnvidia-ml.so.1"
REPO_ROOT = Path(__file__).resolve().parent.parent

Config = Union[str, Mapping[str, object]]


class FakeNvmlBuildError(RuntimeError):
    """gcc failed to build the stub; the message carries gcc's own output."""


def gcc_path() -> Optional[str]:
    return shutil.which("gcc")


def build_fake_nvml(directory: Union[str, Path], omit: Iterable[str] = ()) -> Path:
    """Compile the stub to ``directory/libnvidia-ml.so.1`` and return ``directory``.

    ``omit`` names NVML symbols to leave out of the library's dynamic symbol table (through a
    linker version script), so pynvml really gets NVML_ERROR_FUNCTION_NOT_FOUND for them, as on
    a driver too old to have them.
    """
    gcc = gcc_path()
    if gcc is None:
        raise FakeNvmlBuildError("gcc not found on PATH; cannot build the stand-in libnvidia-ml.so.1")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    command = [gcc, "-Wall", "-Wextra", "-O1", "-shared", "-fPIC",
               f"-Wl,-soname,{LIBRARY_NAME}", "-o", str(directory / LIBRARY_NAME), str(SOURCE)]
    omit = sorted(set(omit))
    if omit:
        script = directory / "exports.map"
        script.write_text("{ global: *; local: %s };\n" % " ".join(f"{name};" for name in omit))
        command.insert(-1, f"-Wl,--version-script={script}")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise FakeNvmlBuildError(f"gcc failed ({result.returncode}): {result.stderr.strip()}")
    return directory


def config_text(config: Config) -> str:
    """A config as the stub reads it: text passes through, a mapping becomes key=value lines."""
    if isinstance(config, str):
        return config
    return "".join(f"{key}={value}\n" for key, value in config.items())


def write_config(path: Union[str, Path], config: Config) -> Path:
    path = Path(path)
    path.write_text(config_text(config))
    return path


def nvml_env(library_dir: Union[str, Path], config_path: Union[str, Path]) -> dict[str, str]:
    """The variables that make a new process load the stub and read ``config_path``.

    LD_LIBRARY_PATH is replaced, not prepended to, so no other NVML on it can win.
    """
    return {"LD_LIBRARY_PATH": str(library_dir), "FAKE_NVML_CONFIG": str(config_path)}


def system_nvml_visible() -> bool:
    """Whether a libnvidia-ml.so.1 is found without LD_LIBRARY_PATH (ld.so.cache, default dirs).

    On such a host (a real GPU machine) an empty LD_LIBRARY_PATH does not make NVML missing.
    """
    if ctypes.util.find_library("nvidia-ml"):
        return True
    env = {key: value for key, value in os.environ.items() if key != "LD_LIBRARY_PATH"}
    probe = f"import ctypes; ctypes.CDLL({LIBRARY_NAME!r})"
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True).returncode == 0


def gpu_config(
    index: int,
    name: str = "NVIDIA A100-SXM4-80GB",
    *,
    brand: int = 2,
    cc: str = "8.0",
    memory: int = 85899345920,
    **extra: object,
) -> dict[str, object]:
    """The config lines for one GPU, keyed ``gpu<index>.<field>``; ``extra`` adds other fields
    (``mig=1`` -> ``gpu0.mig=1``; use ``**{"mig.count": 2}`` for dotted ones)."""
    fields: dict[str, object] = {
        "name": name,
        "uuid": f"GPU-{index:08x}-a1b2-c3d4-e5f6-{index:012x}",
        "brand": brand,
        "cc": cc,
        "memory": memory,
        "pci": f"00000000:{0x07 + 0x10 * index:02X}:00.0",
        "persistence": 1,
    }
    fields.update(extra)
    return {f"gpu{index}.{key}": value for key, value in fields.items()}


def eight_gpu_config() -> dict[str, object]:
    """An 8x H100 80GB HBM3 host on driver 550.54.15 (CUDA 12.4)."""
    config: dict[str, object] = {
        "driver": "550.54.15",
        "cuda": 12040,
        "nvml": "12.550.54.15",
        "count": 8,
    }
    for index in range(8):
        config.update(gpu_config(index, "NVIDIA H100 80GB HBM3", cc="9.0", memory=85520809984))
    return config


def prepare_fake_host(directory: Union[str, Path], config: Optional[Config] = None) -> dict[str, str]:
    """Build the stub into ``directory``, write ``config`` (default: eight_gpu_config()) next to it
    and return the environment variables to add for a process that should see that host."""
    directory = build_fake_nvml(directory)
    path = write_config(Path(directory) / "fake_nvml.conf", eight_gpu_config() if config is None else config)
    return nvml_env(directory, path)


# ---- multi-GPU layouts (the keys are documented at the top of fake_nvml.c) ---------------------


def hgx_config(fabric: int = 3, fabric_status: int = 0, count: int = 8) -> dict[str, object]:
    """An HGX H100 8-GPU board: every GPU on the NVSwitch fabric (18 NVLinks each), GPUs 0-3 on
    CPU socket 0 and 4-7 on socket 1. ``fabric``: 1 not started, 2 in progress, 3 completed."""
    config = eight_gpu_config()
    config.update({"driver": "595.45.04", "cuda": 13020, "nvml": "13.595.45.04", "count": count, "fabric": fabric, "fabric.status": fabric_status})
    for index in range(count):
        config.update(gpu_config(index, "NVIDIA H100 80GB HBM3", cc="9.0", memory=85520809984,
                                 socket=index * 2 // count, nvlinks=18, nvlink_group="board"))  # fmt: skip
    return config


def two_socket_pcie_config(count: int = 8) -> dict[str, object]:
    """A 2-socket PCIe server: no NVLink, GPUs 0-3 on socket 0 and 4-7 on socket 1, peer-to-peer
    within a socket only (across sockets NVML answers IOH topology not supported)."""
    config: dict[str, object] = {"driver": "550.54.15", "cuda": 12040, "nvml": "12.550.54.15", "count": count}
    for index in range(count):
        config.update(gpu_config(index, "NVIDIA L40S", cc="8.9", memory=48305799168, socket=index * 2 // count))
    return config


def nvlink_bridge_pairs_config() -> dict[str, object]:
    """A 4-GPU workstation: two NVLink bridges (GPUs 0-1 and 2-3), PCIe peer-to-peer between the pairs."""
    config: dict[str, object] = {"driver": "550.54.15", "cuda": 12040, "nvml": "12.550.54.15", "count": 4}
    for index in range(4):
        config.update(gpu_config(index, "NVIDIA RTX A6000", brand=12, cc="8.6", memory=51527024640,
                                 nvlinks=4, nvlink_group=f"bridge{index // 2}"))  # fmt: skip
    return config
