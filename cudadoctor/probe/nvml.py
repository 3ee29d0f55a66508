"""Read the driver and GPUs through NVML (the official nvidia-ml-py bindings, import name pynvml).

Every NVML call is guarded: a field NVML cannot give (NOT_SUPPORTED, FUNCTION_NOT_FOUND, ...)
becomes unknown (None); an init failure becomes a DriverFacts state with NVML's own text.
Nothing here raises.

NVML runs in a forked child under a watchdog (``probe_nvml_watched``): a wedged driver (a GPU
fallen off the bus) can block an NVML call forever, and a half-upgraded one can segfault inside
it. The child sends its facts back over a pipe (as plain values, rebuilt accepting only the fact records); a child that does not answer within the
time-out is killed (state "hung"), one that dies of a signal is reported (state "crashed"), and
the rest of the probes still run.
"""

from __future__ import annotations

from ..model.facts import (
    MAX_DEVICE_COUNT,
    NVML_BAD_DEVICE_COUNT,
    NVML_CRASHED,
    NVML_HUNG,
    NVML_DRIVER_MISMATCH,
    NVML_DRIVER_NOT_LOADED,
    NVML_ERROR,
    NVML_LIBRARY_MISSING,
    NVML_NO_PERMISSION,
    NVML_OK,
    DriverFacts,
    GpuFacts,
    LibcudaFacts,
    MigDeviceFacts,
)
from ..model.record import fields, is_record, replace
from ..model.topology import FabricFacts, GpuPeerFacts
from ..model.versions import CudaVersion
from .libcuda import libcuda_answer, libcuda_facts
from .topology import attach_topology
from .watchdog import CRASHED, HUNG, NO_ANSWER, OK, PENDING, WatchedChild

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

DEFAULT_NVML_TIMEOUT_S = 10.0  # a cold nvmlInit on a host without persistence mode takes seconds
# libcuda loads and answers its version in tens of milliseconds on a sound host: one still silent
# after this has NVML asked in a child of its own meanwhile (NvmlWatch.libcuda)
LIBCUDA_GRACE_S = 0.25

# NVML's brand enum -> the lowercase names libnvidia-container matches `brand=` requirements on.
BRAND_NAMES = {
    0: "unknown",
    1: "quadro",
    2: "tesla",
    3: "nvs",
    4: "grid",
    5: "geforce",
    6: "titan",
    7: "vapps",  # libnvidia-container's words, not NVML's enum names (NVML_BRAND_NVIDIA_VAPPS, ...)
    8: "vpc",
    9: "vcs",
    10: "vws",
    11: "cloudgaming",
    12: "quadrortx",
    13: "nvidiartx",
    14: "nvidia",
    15: "geforcertx",
    16: "titanrtx",
}

# NVML return codes that decide the init state (values from nvml.h / pynvml).
_ERR_NO_PERMISSION = 4
_ERR_DRIVER_NOT_LOADED = 9
_ERR_LIBRARY_NOT_FOUND = 12
_ERR_FUNCTION_NOT_FOUND = 13
_ERR_GPU_IS_LOST = 15
_ERR_LIB_RM_VERSION_MISMATCH = 18

_INIT_STATES = {
    _ERR_LIBRARY_NOT_FOUND: NVML_LIBRARY_MISSING,
    _ERR_DRIVER_NOT_LOADED: NVML_DRIVER_NOT_LOADED,
    _ERR_LIB_RM_VERSION_MISMATCH: NVML_DRIVER_MISMATCH,
    _ERR_NO_PERMISSION: NVML_NO_PERMISSION,
}


def _text(value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    value = str(value).strip("\x00").strip()
    return value or None


def _error_text(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # pynvml's __str__ calls back into the library
        text = ""
    code = getattr(exc, "value", None)
    return f"{text} (NVML error {code})" if code is not None else (text or type(exc).__name__)


class _Guard:
    """Calls into NVML where any failure means "unknown" for that one field."""

    def __init__(self, pynvml: Any):
        self.nvml = pynvml
        self.lost = False

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except self.nvml.NVMLError as exc:
            if getattr(exc, "value", None) == _ERR_GPU_IS_LOST:
                self.lost = True
            return None
        except Exception:  # a binding that breaks on an odd driver must not break the probe
            return None


def _import_pynvml() -> Any:
    """``import pynvml``, without the modules nvidia-ml-py imports and never uses.

    nvidia-ml-py takes ``find_library`` from ``ctypes.util`` and never calls it (it loads
    libnvidia-ml.so.1 by name); ``ctypes.util`` imports shutil, subprocess and tempfile (and with
    them bz2, lzma, random, selectors ...), about as much import work as nvidia-ml-py itself, in
    the NVML child of every `check`. When ``ctypes.util`` is not loaded yet, a stand-in takes its
    place for this one import: its ``find_library`` loads the real module if it is ever called,
    and the stand-in is gone from ``sys.modules`` afterwards, so any later import gets the real one.
    """
    import sys
    import types

    if "ctypes.util" in sys.modules:
        import pynvml

        return pynvml

    def find_library(name: str) -> Optional[str]:
        import importlib

        if sys.modules.get("ctypes.util") is stand_in:
            del sys.modules["ctypes.util"]
        found: Optional[str] = importlib.import_module("ctypes.util").find_library(name)
        return found

    stand_in = types.ModuleType("ctypes.util", "stand-in for the import of nvidia-ml-py (cudadoctor.probe.nvml)")
    stand_in.find_library = find_library  # type: ignore[attr-defined]
    sys.modules["ctypes.util"] = stand_in
    try:
        import pynvml
    finally:
        if sys.modules.get("ctypes.util") is stand_in:
            del sys.modules["ctypes.util"]
    return pynvml


def probe_nvml() -> tuple[DriverFacts, tuple[GpuFacts, ...]]:
    """Initialise NVML, read the driver and every GPU, shut NVML down."""
    try:
        pynvml = _import_pynvml()
    except Exception as exc:  # the dependency itself is missing or broken
        return DriverFacts(nvml_state=NVML_ERROR, nvml_error=f"cannot import pynvml: {exc}"), ()

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        code = getattr(exc, "value", None)
        return DriverFacts(nvml_state=_INIT_STATES.get(code if isinstance(code, int) else -1, NVML_ERROR), nvml_error=_error_text(exc)), ()
    except Exception as exc:
        return DriverFacts(nvml_state=NVML_ERROR, nvml_error=_error_text(exc)), ()

    try:
        return _read_everything(pynvml)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _read_everything(pynvml: Any) -> tuple[DriverFacts, tuple[GpuFacts, ...]]:
    guard = _Guard(pynvml)
    cuda_version = guard.call(pynvml.nvmlSystemGetCudaDriverVersion)
    cuda_text = None
    if isinstance(cuda_version, int) and cuda_version > 0:
        cuda_text = str(CudaVersion.from_nvml(cuda_version))
    driver = DriverFacts(
        nvml_state=NVML_OK,
        driver_version=_text(guard.call(pynvml.nvmlSystemGetDriverVersion)),
        cuda_driver_version=cuda_text,
        nvml_version=_text(guard.call(pynvml.nvmlSystemGetNVMLVersion)),
    )
    count = guard.call(pynvml.nvmlDeviceGetCount)
    if not isinstance(count, int) or count < 0:
        return driver, ()
    if count > MAX_DEVICE_COUNT:  # walking 4294967295 handles would take hours
        return replace(
            driver,
            nvml_state=NVML_BAD_DEVICE_COUNT,
            nvml_error=f"nvmlDeviceGetCount reported {count} GPUs (more than {MAX_DEVICE_COUNT} is not a real host)",
        ), ()
    gpus = tuple(_read_gpu(pynvml, index) for index in range(count))
    # How the GPUs reach each other (pairs, NVLink, the NVSwitch fabric, which matters to one GPU
    # too: CUDA does not start on an unready fabric): in this same child, under the same watchdog.
    return driver, attach_topology(_Guard(pynvml), gpus)


def _read_gpu(pynvml: Any, index: int) -> GpuFacts:
    guard = _Guard(pynvml)
    handle = guard.call(pynvml.nvmlDeviceGetHandleByIndex, index)
    if handle is None:
        return GpuFacts(index=index, lost=guard.lost)

    cc = guard.call(pynvml.nvmlDeviceGetCudaComputeCapability, handle)
    brand = guard.call(pynvml.nvmlDeviceGetBrand, handle)
    memory = guard.call(pynvml.nvmlDeviceGetMemoryInfo, handle)
    pci = guard.call(pynvml.nvmlDeviceGetPciInfo, handle)
    persistence = guard.call(pynvml.nvmlDeviceGetPersistenceMode, handle)
    mig = guard.call(pynvml.nvmlDeviceGetMigMode, handle)
    mig_enabled = bool(mig[0]) if isinstance(mig, (list, tuple)) and mig else None
    pending_pages = guard.call(pynvml.nvmlDeviceGetRetiredPagesPendingStatus, handle)
    remapped = guard.call(pynvml.nvmlDeviceGetRemappedRows, handle)
    ecc = guard.call(
        pynvml.nvmlDeviceGetTotalEccErrors,
        handle,
        pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
        pynvml.NVML_VOLATILE_ECC,
    )
    return GpuFacts(
        index=index,
        name=_text(guard.call(pynvml.nvmlDeviceGetName, handle)),
        uuid=_text(guard.call(pynvml.nvmlDeviceGetUUID, handle)),
        brand=BRAND_NAMES.get(brand, "unknown") if isinstance(brand, int) else None,
        compute_capability=f"{cc[0]}.{cc[1]}" if isinstance(cc, (list, tuple)) and len(cc) == 2 else None,
        memory_total_bytes=int(memory.total) if memory is not None else None,
        pci_bus_id=_text(getattr(pci, "busId", None)) if pci is not None else None,
        lost=guard.lost,
        persistence_mode=bool(persistence) if isinstance(persistence, int) else None,
        mig_enabled=mig_enabled,
        mig_devices=_read_mig_devices(pynvml, handle) if mig_enabled else (),
        retired_pages_pending=bool(pending_pages) if isinstance(pending_pages, int) else None,
        remapped_rows_pending=bool(remapped[2]) if isinstance(remapped, (list, tuple)) and len(remapped) == 4 else None,
        remapped_rows_failure=bool(remapped[3]) if isinstance(remapped, (list, tuple)) and len(remapped) == 4 else None,
        ecc_uncorrectable_volatile=int(ecc) if isinstance(ecc, int) else None,
    )


def _read_mig_devices(pynvml: Any, handle: Any) -> tuple[MigDeviceFacts, ...]:
    guard = _Guard(pynvml)
    limit = guard.call(pynvml.nvmlDeviceGetMaxMigDeviceCount, handle)
    if not isinstance(limit, int):
        return ()
    devices = []
    for slot in range(limit):
        mig = guard.call(pynvml.nvmlDeviceGetMigDeviceHandleByIndex, handle, slot)
        if mig is None:
            continue  # empty slot: NVML answers NOT_FOUND
        memory = guard.call(pynvml.nvmlDeviceGetMemoryInfo, mig)
        devices.append(
            MigDeviceFacts(
                index=slot,
                uuid=_text(guard.call(pynvml.nvmlDeviceGetUUID, mig)),
                name=_text(guard.call(pynvml.nvmlDeviceGetName, mig)),
                memory_total_bytes=int(memory.total) if memory is not None else None,
            )
        )
    return tuple(devices)


# ---- the watchdog ------------------------------------------------------------------------------

Probed = tuple[DriverFacts, tuple[GpuFacts, ...]]


def probe_nvml_watched(timeout: float = DEFAULT_NVML_TIMEOUT_S) -> Probed:
    """probe_nvml in a forked child, bounded by ``timeout`` seconds; never hangs, never dies with it."""
    return NvmlWatch.start(timeout).result()


class NvmlWatch:
    """A probe_nvml running in a forked child (probe/watchdog.py: it dies with this process).
    ``start`` returns at once, so the caller can run the other probes while NVML initialises;
    ``result`` waits for the child's answer until the deadline, then kills it.

    With ``libcuda``, the child first loads libcuda and asks its version (probe/libcuda.py), each
    library within ``timeout``: one fork for both. A libcuda that hangs or crashes is reported as
    it is in a child of its own. One that has not answered within LIBCUDA_GRACE_S has NVML asked
    in a fresh child at once, while libcuda's own deadline runs (the first child is stopped once
    libcuda answers): so a host whose libcuda and NVML both hang costs one ``timeout`` (and the
    grace), not two one after the other."""

    def __init__(self, child: WatchedChild, libcuda: bool = False) -> None:
        self.child: Optional[WatchedChild] = child
        self.pid, self.timeout = child.pid, child.timeout
        self.libcuda_pending = libcuda
        self._libcuda: Optional[LibcudaFacts] = None
        self.spare: Optional[WatchedChild] = None  # NVML's own child while a slow libcuda is waited for

    @classmethod
    def start(cls, timeout: float = DEFAULT_NVML_TIMEOUT_S, libcuda: bool = False) -> "NvmlWatch | InProcess":
        """Fork the child and return at once (``InProcess`` where no child can be forked)."""
        child = WatchedChild.start(_nvml_answer, timeout, first=libcuda_answer if libcuda else None)
        return cls(child, libcuda) if child is not None else InProcess()

    def cancel(self) -> None:
        """Stop the child: its answer is not wanted (the command failed before it was read)."""
        self.libcuda_pending = False  # nor libcuda's: no fresh child is started for NVML
        for child in (self.child, self.spare):
            if child is not None:
                child.cancel()

    def libcuda(self) -> Optional[LibcudaFacts]:
        """libcuda's facts, asked in this child ahead of NVML; None when it was started without."""
        if self.libcuda_pending and self.child is not None:
            self.libcuda_pending = False
            state, value = self.child.first_answer(within=LIBCUDA_GRACE_S)
            if state == PENDING:  # a slow or hung libcuda: NVML starts now, not at libcuda's deadline
                # Kept on the watch while libcuda is waited for: cancel() (a signal, an error in
                # the command) stops it too.
                self.spare = WatchedChild.start(_nvml_answer, self.timeout)
                try:
                    state, value = self.child.first_answer()
                except BaseException:  # interrupted while waiting: neither child is wanted
                    self.cancel()
                    raise
            self._libcuda = libcuda_facts(state, value, self.timeout)
            spare, self.spare = self.spare, None
            if spare is not None:  # NVML is already being asked there: the first child is not needed
                self.child.cancel()
                self.child = spare
            elif state != OK:  # the child went with libcuda: NVML is asked in one of its own
                self.child = WatchedChild.start(_nvml_answer, self.timeout)
            self.pid = self.child.pid if self.child is not None else self.pid
        return self._libcuda

    def result(self) -> Probed:
        self.libcuda()  # its answer comes first
        if self.child is None:  # no second child could be forked: NVML here, as InProcess does
            return probe_nvml()
        state, value = self.child.answer()
        if state == HUNG:
            text = f"an NVML call did not return within {self.timeout:g} s (the probe was stopped)"
            return _watchdog_facts(NVML_HUNG, text), ()
        if state == CRASHED:
            text = f"the NVML probe was killed by {value} inside the NVIDIA library"
            return _watchdog_facts(NVML_CRASHED, text), ()
        try:
            if state != OK:
                raise ValueError("no answer")
            driver, gpus = _rebuild(value)
            if isinstance(driver, DriverFacts) and isinstance(gpus, tuple) and all(isinstance(g, GpuFacts) for g in gpus):
                return driver, gpus
            raise ValueError("not the facts")
        except Exception:  # a truncated or garbled answer
            reason = f"exit status {value}" if state == NO_ANSWER and value else "no answer"
            return _watchdog_facts(NVML_CRASHED, f"the NVML probe ended without an answer ({reason})"), ()


def _nvml_answer() -> Any:
    return _plain(probe_nvml())


# The child's answer: the fact records as plain values (a record is the list [name, {field: value}];
# tuples stay tuples), in marshal's format. marshal is built in (nothing to import, where pickle
# costs milliseconds at start-up) and fast; rebuilding accepts only the fact records' names.
_RECORDS = {cls.__name__: cls for cls in (DriverFacts, GpuFacts, MigDeviceFacts, GpuPeerFacts, FabricFacts)}


def _plain(value: Any) -> Any:
    if is_record(value):
        return [type(value).__name__, {f.name: _plain(getattr(value, f.name)) for f in fields(value)}]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return value


def _rebuild(value: Any) -> Any:
    if isinstance(value, list):
        name, values = value
        return _RECORDS[name](**{key: _rebuild(item) for key, item in values.items()})
    if isinstance(value, tuple):
        return tuple(_rebuild(item) for item in value)
    return value


class InProcess:
    """Where no child can be forked: NVML in this process, unguarded (as before the watchdog)."""

    def result(self) -> Probed:
        return probe_nvml()

    def cancel(self) -> None:
        pass

    def libcuda(self) -> Optional[LibcudaFacts]:
        return None  # asked where libcuda's own watchdog can run it (probe_libcuda_watched)


NvmlProbe = NvmlWatch | InProcess  # written with |, not typing.Union: no typing at run time


def _watchdog_facts(state: str, text: str) -> DriverFacts:
    return DriverFacts(nvml_state=state, nvml_error=text)
