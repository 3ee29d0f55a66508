"""libcuda.so.1 (the CUDA driver API), read through ctypes independently of NVML.

Loading the library and asking ``cuDriverGetVersion`` is cheap and needs no GPU: it tells a host
with a driver but no NVML (a container with a partial driver mount) from one with no driver, and
shows which CUDA version the libcuda that programs will load supports (a cuda-compat libcuda
reports a newer one than NVML). ``cuInit`` is never called here: it touches the GPUs and can be
slow or hang; torch's runtime probe (a child process) reports initialisation errors. Nothing here
raises.
"""

from __future__ import annotations

import ctypes

from ..model.facts import LibcudaFacts
from ..model.versions import CudaVersion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

LIBRARY = "libcuda.so.1"
CUDA_ERROR_STUB_LIBRARY = 34


def _loaded_path(fragment: str) -> Optional[str]:
    """The file the dynamic loader mapped for ``fragment``, from this process's own map."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and fragment in parts[5].rsplit("/", 1)[-1]:
                    return parts[5].strip()
    except OSError:
        pass
    return None


def _error_text(lib: ctypes.CDLL, code: int) -> str:
    text = ctypes.c_char_p()
    try:
        function = lib.cuGetErrorString
        function.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        if function(code, ctypes.byref(text)) == 0 and text.value:
            return f"{text.value.decode('utf-8', 'replace')} (CUDA error {code})"
    except (AttributeError, OSError):
        pass
    return f"CUDA error {code}"


def probe_libcuda(library: str = LIBRARY) -> LibcudaFacts:
    try:
        lib = ctypes.CDLL(library)
    except OSError as exc:
        return LibcudaFacts(loadable=False, error=str(exc))
    path = _loaded_path("libcuda.so")
    version = ctypes.c_int(0)
    try:
        function = lib.cuDriverGetVersion
        function.argtypes = [ctypes.POINTER(ctypes.c_int)]
        code = int(function(ctypes.byref(version)))
    except (AttributeError, OSError) as exc:
        return LibcudaFacts(loadable=True, path=path, error=f"cuDriverGetVersion: {exc}")
    if code != 0:
        return LibcudaFacts(loadable=True, path=path, error=_error_text(lib, code), error_code=code)
    value = version.value
    text = str(CudaVersion.from_nvml(value)) if value > 0 else None
    return LibcudaFacts(loadable=True, path=path, driver_version=text)


DEFAULT_LIBCUDA_TIMEOUT_S = 10.0
_FIELDS = ("loadable", "path", "driver_version", "error", "error_code")


def libcuda_answer(library: str = LIBRARY) -> dict[str, object]:
    """probe_libcuda's facts as plain values: what a watched child answers (probe/watchdog.py)."""
    facts = probe_libcuda(library)
    return {name: getattr(facts, name) for name in _FIELDS}


def probe_libcuda_watched(timeout: float = DEFAULT_LIBCUDA_TIMEOUT_S, library: str = LIBRARY) -> LibcudaFacts:
    """probe_libcuda in a forked child under the watchdog (probe/watchdog.py), bounded by
    ``timeout`` seconds: a libcuda whose cuDriverGetVersion never returns, or that crashes when
    loaded, is reported in ``error`` instead of hanging or killing the command. (A probe of NVML
    as well asks libcuda first in NVML's own child: probe/nvml.py's ``NvmlWatch``.)"""
    from .watchdog import WatchedChild

    child = WatchedChild.start(lambda: libcuda_answer(library), timeout)
    if child is None:  # no child can be forked: in this process, as before the watchdog
        return probe_libcuda(library)
    state, value = child.answer()
    return libcuda_facts(state, value, timeout, library)


def libcuda_facts(state: str, value: object, timeout: float, library: str = LIBRARY) -> LibcudaFacts:
    """The facts of a watched child's answer to :func:`libcuda_answer` (a watchdog state and value)."""
    from .watchdog import CRASHED, HUNG, OK

    if state == HUNG:
        return LibcudaFacts(error=f"loading {library} or calling cuDriverGetVersion did not return within {timeout:g} s (the probe was stopped)")
    if state == CRASHED:
        return LibcudaFacts(error=f"the libcuda probe was killed by {value} inside {library}")
    if state == OK and isinstance(value, dict):
        kept = {name: value.get(name) for name in _FIELDS}
        if isinstance(kept["loadable"], (bool, type(None))) and isinstance(kept["error_code"], (int, type(None))) and all(
            isinstance(kept[name], (str, type(None))) for name in ("path", "driver_version", "error")
        ):
            return LibcudaFacts(**kept)
    return LibcudaFacts(error="the libcuda probe ended without an answer")
