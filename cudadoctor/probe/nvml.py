"""Read the driver and GPUs through NVML (the official nvidia-ml-py bindings, import name pynvml).

Every NVML call is guarded: a field NVML cannot give (NOT_SUPPORTED, FUNCTION_NOT_FOUND, ...)
becomes unknown (None); an init failure becomes a DriverFacts state with NVML's own text.
Nothing here raises.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ..model.facts import (
    NVML_DRIVER_MISMATCH,
    NVML_DRIVER_NOT_LOADED,
    NVML_ERROR,
    NVML_LIBRARY_MISSING,
    NVML_NO_PERMISSION,
    NVML_OK,
    DriverFacts,
    GpuFacts,
    MigDeviceFacts,
)
from ..model.versions import CudaVersion

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


def probe_nvml() -> tuple[DriverFacts, tuple[GpuFacts, ...]]:
    """Initialise NVML, read the driver and every GPU, shut NVML down."""
    try:
        import pynvml
    except Exception as exc:  # the dependency itself is missing or broken
        return DriverFacts(nvml_state=NVML_ERROR, nvml_error=f"cannot import pynvml: {exc}"), ()

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        code = getattr(exc, "value", None)
        state = _INIT_STATES.get(code, NVML_ERROR) if isinstance(code, int) else NVML_ERROR
        return DriverFacts(nvml_state=state, nvml_error=_error_text(exc)), ()
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
    return driver, tuple(_read_gpu(pynvml, index) for index in range(count))


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
