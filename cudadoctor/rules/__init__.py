"""The checks: pure functions ``(CheckContext) -> findings``, one module per report group.

``CHECKS`` is the run order (and the order of findings in JSON); ``GROUPS`` the report's groups in
the order the text report shows them. A check never raises on odd facts: unknown values produce
no verdict (or an info finding); should one raise all the same, the runner reports it as one
``internal-error`` finding and the other checks still run (cudadoctor.doctor.runner).
"""

from __future__ import annotations

import importlib

from ..model.findings import Finding
from . import driver, environment, gpu, kernel, multigpu, ngc, nvml, releases, table, torch
from .context import Check, CheckContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, Iterable

# Report groups, in the order the text report shows them: (key, heading).
GROUPS: tuple[tuple[str, str], ...] = (
    ("nvml", "Driver (NVML)"),
    ("system", "Kernel module and devices"),
    ("gpu", "GPUs"),
    ("driver", "Driver vs target CUDA"),
    ("environment", "Environment"),
    ("docker", "Docker"),
    ("image", "Image"),
    ("torch", "Installed torch"),
    ("multi-gpu", "Multi-GPU (NCCL)"),
)


def _probed_containers(ctx: CheckContext) -> bool:
    """Whether something container-related was probed or asked for: worked out once per check run
    (kept on the context), as each of the container checks asks it."""
    known = ctx.__dict__.get("_probed_containers")
    if known is None:
        target = ctx.target
        known = ctx.facts.docker is not None or (target is not None and (target.image_facts is not None or bool(target.requirements)))
        ctx.__dict__["_probed_containers"] = known
    return known


def _container_check(module: str, name: str) -> Callable[[CheckContext], Iterable[Finding]]:
    """A container check, loaded only when something container-related was probed or asked for:
    a plain `check` needs neither these modules nor the requirement grammar, and start-up time is a feature."""

    def run(ctx: CheckContext) -> Iterable[Finding]:
        if not _probed_containers(ctx):
            return ()
        check: Callable[[CheckContext], Iterable[Finding]] = getattr(importlib.import_module(f".{module}", __name__), name)
        return check(ctx)

    run.__name__ = run.__qualname__ = name
    return run


CHECKS: tuple[Check, ...] = (
    Check("nvml", "nvml", "nvml", nvml.check_nvml),
    Check("gpus-present", "gpu", "gpu", gpu.check_gpus_present),
    Check("driver-for-target", "driver", "driver", driver.check_driver_for_target),
    Check("driver-knows-gpus", "driver", "driver", driver.check_driver_knows_gpus),
    Check("newer-release", "driver", "driver", releases.check_newer_release),
    Check("gpu-arch", "gpu", "gpu", gpu.check_arch_for_target),
    Check("driver-presence", "nvml", "driver", nvml.check_driver_presence),
    Check("kernel-module", "system", "driver", kernel.check_kernel_module),
    Check("device-nodes", "system", "driver", kernel.check_device_nodes),
    Check("libcuda", "environment", "environment", environment.check_libcuda),
    Check("container", "environment", "environment", environment.check_container),
    Check("wsl", "environment", "environment", environment.check_wsl),
    Check("visible-devices", "environment", "environment", environment.check_visible_devices),
    Check("gpu-health", "gpu", "gpu", gpu.check_health),
    Check("mig", "gpu", "gpu", gpu.check_mig),
    Check("forward-compat", "driver", "driver", driver.check_forward_compat),
    Check("gpu-memory", "gpu", "gpu", gpu.check_memory),
    Check("gpu-capabilities", "gpu", "gpu", gpu.check_capabilities),
    Check("torch", "torch", "torch", torch.check_torch),
    Check("table-current", "environment", "environment", table.check_table_current),
    Check("docker", "docker", "docker", _container_check("docker", "check_docker")),
    Check("image", "image", "image", _container_check("image", "check_image")),
    Check("requirements", "image", "image", _container_check("image", "check_requirements")),
    Check("smoke", "image", "image", _container_check("image", "check_smoke")),
    # issue 13: NGC PyTorch containers (driver group); image hygiene, read from its files, and the
    # `docker run` line of check --run (image group)
    Check("ngc", "driver", "driver", ngc.check_ngc),
    Check("hygiene", "image", "image", _container_check("hygiene", "check_hygiene")),
    Check("run-line", "image", "image", _container_check("runline", "check_run")),
    # issue 20: multi-GPU readiness (two or more GPUs, or --gpus-per-job): the NVSwitch fabric, the
    # paths between the job's GPUs, the GPUs themselves, NCCL's system settings, the launch line
    Check("fabric", "multi-gpu", "gpu", multigpu.check_fabric),
    Check("multi-gpu-paths", "multi-gpu", "gpu", multigpu.check_paths),
    Check("multi-gpu-gpus", "multi-gpu", "gpu", multigpu.check_job_gpus),
    Check("multi-gpu-system", "multi-gpu", "environment", multigpu.check_system),
    Check("run-line-multi-gpu", "multi-gpu", "image", _container_check("runline_multigpu", "check_run_multigpu")),
)

__all__ = ["CHECKS", "GROUPS", "Check", "CheckContext"]
