"""An installed torch: its package metadata first (cheap, no import), its runtime only when asked.

The metadata probe reads the ``torch-*.dist-info`` directory name and ``torch/version.py`` from
this interpreter's ``sys.path`` (a few directory listings: ``check --json`` stays fast). The
runtime probe imports torch in a child process with a timeout, so a CUDA initialisation that
hangs, crashes or prints cannot take the doctor with it. Nothing here raises.
"""

from __future__ import annotations

import os
import re
import sys

from ..model.facts import TorchExtensionFacts, TorchFacts
from ..model.record import replace
from ..model.versions import VersionError, parse_package_version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

RUNTIME_TIMEOUT_S = 120.0

_DIST_INFO = re.compile(r"^torch-([0-9][^-]*)\.(?:dist|egg)-info$")
_VERSION_PY_FIELD = r"^{name}(?:\s*:[^=]+)?\s*=\s*(None|'[^']*'|\"[^\"]*\")"

# Runs in the child: everything it learns goes to stdout as one JSON object.
_RUNTIME_SCRIPT = r"""
import json, warnings
out = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        import torch
        out["version"] = torch.__version__
        out["cuda"] = torch.version.cuda
        try:
            out["arch_list"] = list(torch.cuda.get_arch_list())
        except Exception:
            out["arch_list"] = []
        try:
            out["cudnn"] = torch.backends.cudnn.version()
        except Exception:
            out["cudnn"] = None
        try:
            nccl = torch.cuda.nccl.version()
            out["nccl"] = ".".join(str(p) for p in nccl) if isinstance(nccl, tuple) else nccl
        except Exception:
            out["nccl"] = None
        out["available"] = bool(torch.cuda.is_available())
        out["device_count"] = int(torch.cuda.device_count())
        if not out["available"]:
            try:
                torch.cuda.init()
            except Exception as exc:
                out["error"] = str(exc)
    except Exception as exc:
        out["import_error"] = type(exc).__name__ + ": " + str(exc)
out["warnings"] = [str(w.message) for w in caught]
print("CUDADOCTOR-TORCH " + json.dumps(out))
"""


def _version_py_field(text: str, name: str) -> Optional[str]:
    match = re.search(_VERSION_PY_FIELD.format(name=name), text, re.MULTILINE)
    if not match or match.group(1) == "None":
        return None
    return match.group(1)[1:-1] or None


def variant_of(version: str, cuda: Optional[str], hip: Optional[str]) -> Optional[str]:
    """cu121 / cpu / rocm6.2: the wheel's local version tag, else what version.py says it was built with."""
    try:
        local = parse_package_version(version).local
    except VersionError:
        local = version.partition("+")[2] or None
    if local:
        return local
    if cuda:
        parts = cuda.split(".")
        return f"cu{parts[0]}{parts[1] if len(parts) > 1 else '0'}"
    if hip:
        return "rocm" + ".".join(hip.split(".")[:2])
    return "cpu"


def find_torch(paths: Optional[Sequence[str]] = None) -> Optional[tuple[str, str]]:
    """(site directory, version) of the first torch distribution on the path, as import would find it."""
    for entry in sys.path if paths is None else paths:
        directory = entry or os.getcwd()
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            match = _DIST_INFO.match(name)
            if match:
                return directory, match.group(1)
    return None


def probe_torch_metadata(paths: Optional[Sequence[str]] = None) -> TorchFacts:
    try:
        found = find_torch(paths)
        if found is None:
            return TorchFacts(installed=False)
        site, version = found
        location = os.path.join(site, "torch")
        try:
            with open(os.path.join(location, "version.py"), encoding="utf-8") as handle:
                text = handle.read(16384)
        except OSError:
            text = ""
        cuda = _version_py_field(text, "cuda")
        hip = _version_py_field(text, "hip")
        facts = TorchFacts(installed=True, version=version, variant=variant_of(version, cuda, hip), cuda=cuda, location=location)
        arch_list, error = read_torch_binaries(location) if cuda else ((), None)
        if arch_list or error:
            facts = replace(facts, arch_list=arch_list, arch_evidence="binary" if arch_list else None, binary_error=error)
        if cuda:
            facts = replace(facts, extensions=read_torch_extensions(site))
        return facts
    except Exception as exc:  # an odd site-packages must not stop the check
        return TorchFacts(installed=False, runtime_error=f"reading torch's metadata failed: {exc}")


# The libraries that hold torch's CUDA kernels: one since 1.13, split in two in some 1.x builds.
TORCH_CUDA_LIBRARIES = ("libtorch_cuda.so", "libtorch_cuda_cu.so", "libtorch_cuda_cpp.so")


def read_torch_binaries(location: str) -> tuple[tuple[str, ...], Optional[str]]:
    """The arch list torch.cuda.get_arch_list() would give (sm_80 ... compute_90), read from the
    fat binaries of torch/lib/libtorch_cuda*.so without importing torch; (), None when there is
    no such library; (), the one-line reason when one cannot be read."""
    from ..binaries.errors import BinaryFormatError
    from ..binaries.judge import arch_list
    from ..binaries.code import GpuCode
    from ..binaries.read import read_binary

    entries: list[GpuCode] = []
    for name in TORCH_CUDA_LIBRARIES:
        path = os.path.join(location, "lib", name)
        try:
            with open(path, "rb", buffering=0) as stream:  # small reads far apart: no buffer to refill at each
                entries.extend(read_binary(stream, os.fstat(stream.fileno()).st_size).entries)
        except FileNotFoundError:
            continue
        except BinaryFormatError as exc:
            return (), f"{path}: {exc}"
        except OSError as exc:
            return (), f"{path}: cannot read it ({exc.strerror or exc})"
    return tuple(arch_list(entries).split()), None


_REQUIRES_TORCH = re.compile(r"^Requires-Dist:\s*torch\s*(?:$|[\s;(<>=!~\[])", re.IGNORECASE)
MAX_EXTENSION_PACKAGES = 500
MAX_EXTENSION_FILES = 2000


def read_torch_extensions(site: str) -> tuple[TorchExtensionFacts, ...]:
    """The packages in torch's site directory that require torch (their METADATA says
    Requires-Dist: torch) and whose shared objects (their RECORD lists them) carry GPU code."""
    from ..binaries.code import GpuCode
    from ..binaries.errors import BinaryFormatError
    from ..binaries.judge import arch_list
    from ..binaries.read import read_binary
    from .binaries import SHARED_OBJECT, name_and_version, record_lines

    try:
        infos = sorted(name for name in os.listdir(site) if name.endswith(".dist-info") and not _DIST_INFO.match(name))
    except OSError:
        return ()
    found = []
    files = 0
    for info in infos[:MAX_EXTENSION_PACKAGES]:
        try:
            with open(os.path.join(site, info, "METADATA"), "rb") as handle:
                head = handle.read(64 << 10).split(b"\n\n", 1)[0]  # the headers: Requires-Dist is among them
        except OSError:
            continue
        if not any(_REQUIRES_TORCH.match(line) for line in head.decode("utf-8", "replace").splitlines()):
            continue
        name, version = name_and_version(head)
        try:
            with open(os.path.join(site, info, "RECORD"), "rb") as handle:
                listed = [p for p in record_lines(handle.read(16 << 20)) if SHARED_OBJECT.search(p)]
        except OSError:
            continue
        entries: list[GpuCode] = []
        error = None
        for relative in listed:
            files += 1
            if files > MAX_EXTENSION_FILES:
                break
            path = os.path.normpath(os.path.join(site, relative))
            try:
                with open(path, "rb", buffering=0) as stream:
                    if stream.read(4) != b"\x7fELF":
                        continue
                    entries.extend(read_binary(stream, os.fstat(stream.fileno()).st_size).entries)
            except BinaryFormatError as exc:
                error = f"{relative}: {exc}"
            except OSError:
                continue
        if entries or error:
            found.append(TorchExtensionFacts(name=name or info[: -len(".dist-info")].rsplit("-", 1)[0], version=version,
                                             arch_list=tuple(arch_list(entries).split()), error=error))  # fmt: skip
    return tuple(found)


def probe_torch_runtime(metadata: TorchFacts, timeout_s: float = RUNTIME_TIMEOUT_S, python: Optional[str] = None) -> TorchFacts:
    """Import torch in a child process and record what it says about CUDA."""
    if not metadata.installed:
        return metadata
    import json
    command = [python or sys.executable, "-c", _RUNTIME_SCRIPT]
    try:
        import subprocess  # only for --torch-runtime: keeps `check` start-up lean

        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return replace(
            metadata, runtime_probed=True, runtime_error=f"importing torch and initialising CUDA did not finish within {timeout_s:.0f} s"
        )
    except OSError as exc:
        return replace(metadata, runtime_probed=True, runtime_error=f"cannot start {command[0]}: {exc}")
    line = next((out for out in result.stdout.splitlines() if out.startswith("CUDADOCTOR-TORCH ")), None)
    if line is None:
        tail = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        return replace(metadata, runtime_probed=True, runtime_error=f"the torch probe process failed: {tail}")
    try:
        data = json.loads(line[len("CUDADOCTOR-TORCH "):])
    except ValueError:
        return replace(metadata, runtime_probed=True, runtime_error="the torch probe process printed unreadable output")
    if data.get("import_error"):
        return replace(metadata, runtime_probed=True, runtime_error=f"import torch failed: {data['import_error']}")
    cuda_warnings = [w for w in data.get("warnings", []) if "CUDA" in w or "cuda" in w]
    error = data.get("error") or None
    if cuda_warnings:
        error = "; ".join(cuda_warnings + ([error] if error else []))
    cudnn = data.get("cudnn")
    return replace(
        metadata,
        runtime_probed=True,
        cuda=data.get("cuda"),
        arch_list=tuple(str(a) for a in data.get("arch_list") or ()),
        arch_evidence="runtime" if data.get("arch_list") else None,
        cudnn=str(cudnn) if cudnn is not None else None,
        nccl=str(data["nccl"]) if data.get("nccl") is not None else None,
        cuda_available=bool(data.get("available")),
        device_count=int(data.get("device_count") or 0),
        cuda_error=error,
    )
