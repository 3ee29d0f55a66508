"""cudadoctor: will a CUDA PyTorch workload run on this host, and which image or wheel fits it?

The Python API (docs/api.md)::

    from cudadoctor import check, probe, recommend

    report = check(driver="535.104.05", gpus=["T4"])   # what-if: no GPU needed here
    report["verdict"], report["recommendation"]["image"]

The functions live in :mod:`cudadoctor.api` and are loaded on first use, so ``import cudadoctor``
(which the ``cudadoctor`` command does before anything else) stays as cheap as it was.
"""

from __future__ import annotations

import sys
import types

from .about import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from typing import Any
    from .api import CudadoctorError, Host, check, load_table, probe, recommend

__all__ = ["__version__", "CudadoctorError", "Host", "check", "load_table", "probe", "recommend"]
_API = frozenset({"CudadoctorError", "Host", "check", "load_table", "probe", "recommend"})


def __getattr__(name: str) -> Any:
    """``cudadoctor.check`` and the other API names, imported from cudadoctor.api on first use (PEP 562)."""
    if name in _API:
        from . import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'cudadoctor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _API)


# `cudadoctor.probe` (the probes) and `cudadoctor.recommend` (the recommender) are also
# submodules. Importing a submodule makes the import system set the package attribute of that
# name to the module, which would replace the API function a caller imported by that name. The
# package keeps its public names: the submodules stay in sys.modules, where `from
# cudadoctor.probe import nvml` and `from .recommend import ...` find them.
_SHADOWED = frozenset({"probe", "recommend"})


class _Package(types.ModuleType):
    def __setattr__(self, name: str, value: Any) -> None:
        if name in _SHADOWED and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
