"""Driver vs target CUDA: does the driver support the CUDA version the target was built with, does a
planned driver know the planned GPUs, and can CUDA forward compatibility (cuda-compat) help."""

from __future__ import annotations

from ..compat.table import CompatTable
from ..host.view import DriverSupport, HostView, full_support_clause, gpu_label
from ..model.facts import GpuFacts
from ..model.findings import FAIL, INFO, OK, WARN, Action, Finding
from ..model.versions import CudaVersion
from . import ngc
from .context import CheckContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional


def check_driver_for_target(ctx: CheckContext) -> list[Finding]:
    host, facts, table, target = ctx.host, ctx.facts, ctx.table, ctx.target
    cuda = ctx.target_cuda
    if target is None or cuda is None or not facts.nvml_ok:  # an image may not say its CUDA
        return []
    support = host.support(cuda)
    source = _driver_sources(table, cuda)
    what = f"{target.variant} (CUDA {cuda.major_minor})"
    driver = support.driver or "unknown"
    if support.tier == "unknown":
        return []
    if support.tier != "full" and ngc.forward_compat_covers(ctx, cuda):
        return []  # an NGC container's own cuda-compat runs it: the ngc check says how
    if support.tier == "full" and support.forward_compat:
        return [
            Finding(
                code="driver-ok",
                severity=OK,
                title=f"Driver {driver} supports {what} through CUDA forward compatibility",
                detail=f"Driver {driver} supports CUDA {host.driver_cuda or 'an older release'} itself; the cuda-compat libcuda "
                    f"in effect ({host.forward_compat_directory or 'a compat directory'}) provides CUDA {support.driver_cuda}, "
                    f"which data-center GPUs may use. CUDA {cuda.major_minor} needs >= {support.full_min} without it.",
                source=source,
            )
        ]
    if support.tier == "full":
        supported = f", which supports CUDA {support.driver_cuda}" if support.driver_cuda else ""
        return [
            Finding(
                code="driver-ok",
                severity=OK,
                title=f"Driver {driver} supports {what}",
                detail=f"Driver {driver}{supported}; CUDA {cuda.major_minor} needs >= {support.full_min}.",
                source=source,
            )
        ]
    ceiling = host.driver_ceiling()
    if support.tier == "minor-compat" and ceiling is not None and host.past_ceiling(support.full_min):
        # Full support needs a branch these GPUs cannot run: minor-version compatibility is as far as they go.
        return [
            Finding(
                code="driver-minor-compat",
                severity=WARN,
                title=f"{what} runs only through CUDA minor-version compatibility",
                detail=f"Driver {driver} supports CUDA {support.driver_cuda or 'an older release'}, older than "
                    f"{cuda.major_minor}, but it is at least {support.compat_min}, the floor for every CUDA "
                    f"{cuda.major}.x toolkit. Full CUDA {cuda.major_minor} support needs >= {support.full_min}, and "
                    f"{ceiling.words()}, so these GPUs never get more than this mode. It gives things up: PTX newer "
                    "than the driver cannot be JIT-compiled, and APIs added after the driver's CUDA return "
                    "cudaErrorCallRequiresNewerDriver.",
                hint="Choose a variant this driver supports fully (`cudadoctor recommend`); no driver these GPUs can run "
                     f"supports CUDA {cuda.major_minor} fully.",
                source=source,
            )
        ]
    if support.tier == "minor-compat":
        return [
            Finding(
                code="driver-minor-compat",
                severity=WARN,
                title=f"{what} runs only through CUDA minor-version compatibility",
                detail=f"Driver {driver} supports CUDA {support.driver_cuda or 'an older release'}, older than "
                    f"{cuda.major_minor}, but it is at least {support.compat_min}, the floor for every CUDA "
                    f"{cuda.major}.x toolkit. That mode gives things up: PTX newer than the driver cannot be "
                    "JIT-compiled (a build that only ships PTX for a GPU fails there), and APIs added after the "
                    "driver's CUDA return cudaErrorCallRequiresNewerDriver.",
                hint=(f"Upgrade the driver to >= {support.full_min} for full CUDA {cuda.major_minor} support, or "
                      "choose a variant this driver supports fully (`cudadoctor recommend`).")
                if support.full_min
                else (f"No driver in the table supports CUDA {cuda.major_minor} fully (it has no Table 3 row yet: "
                      "`cudadoctor table update`, or a newer cudadoctor); choose a variant this driver supports "
                      "fully (`cudadoctor recommend`)."),
                source=source,
                actions=(
                    Action(
                        "upgrade-driver", min_driver=str(support.full_min), full_driver=str(support.full_min),
                        torch=target.torch, variant=target.variant, cuda=str(cuda.major_minor), support="full",
                    ),
                )
                if support.full_min
                else (),
            )
        ]
    floor = support.compat_min or support.full_min
    compat_clause = ""
    if support.compat_min and support.compat_min != support.full_min:
        compat_clause = f", or >= {support.compat_min} under minor-version compatibility"
    upgrade = _upgrade_words(host, support, cuda)
    reachable = floor is not None and not host.past_ceiling(floor)
    return [
        Finding(
            code="driver-too-old",
            severity=FAIL,
            title=f"Driver {driver} is too old for {what}",
            detail=f"Driver {driver} supports CUDA {support.driver_cuda or 'older releases only'}; CUDA "
                f"{cuda.major_minor} needs >= {support.full_min}{compat_clause}. CUDA programs fail with "
                "\"CUDA driver version is insufficient for CUDA runtime version\" (torch: \"The NVIDIA driver "
                "on your system is too old\").",
            hint=upgrade,
            source=source,
            actions=(
                Action(
                    "upgrade-driver", min_driver=str(floor), full_driver=_text(None if host.past_ceiling(support.full_min) else support.full_min),
                    torch=target.torch, variant=target.variant, cuda=str(cuda.major_minor),
                    support="full" if floor == support.full_min else "minor-compat",
                ),
            )
            if reachable
            else (),
        )
    ]


def _driver_sources(table: CompatTable, cuda: CudaVersion) -> str:
    """The citations of the Table 3 row and the minor-version floor a CUDA version is judged by:
    worded once per table and CUDA minor (every host's driver finding cites them)."""
    memo = table.memo("rules.driver.sources")
    key = (cuda.major, cuda.minor)
    if key not in memo:
        rows = (table.min_driver_full(cuda), table.minor_compat_floor(cuda.major))
        memo[key] = "; ".join(dict.fromkeys(table.cite(row.source) for row in rows if row is not None))
    return memo[key]  # type: ignore[no-any-return]


def check_driver_knows_gpus(ctx: CheckContext) -> list[Finding]:
    """A planned driver older than the first CUDA release that targets a planned GPU's architecture.

    On a real host NVML enumerating a GPU proves the driver drives it; this matters for what-if
    plans (--driver / --gpu), where nothing else would notice an H100 paired with an R450 driver.
    """
    host, table = ctx.host, ctx.table
    driver = host.driver
    if not host.planned or driver is None or not host.nvml_ok:
        return []
    findings = []
    for gpu in host.gpus_in_scope:
        cc = host.cc(gpu)
        first = table.first_toolkit_for(cc) if cc is not None else None
        row = table.min_driver_full(first.cuda) if first is not None else None
        if row is None or cc is None or first is None or driver >= row.min_driver_linux:
            continue
        findings.append(
            Finding(
                code="driver-predates-gpu",
                severity=WARN,
                title=f"Driver {driver} predates {gpu_label(gpu)} ({cc.sm})",
                detail=f"CUDA {first.cuda.major_minor} is the first release that can build for {cc.sm}, and it shipped "
                    f"with driver {row.min_driver_linux}; driver {driver} is older. Drivers older than an "
                    "architecture generally do not drive it: nvidia-smi would not list the GPU.",
                hint=f"Plan for driver >= {row.min_driver_linux} (or the driver NVIDIA's release notes name for this "
                    "GPU).",
                source="; ".join(dict.fromkeys((table.cite(first.source), table.cite(row.source)))),
                gpu_index=gpu.index,
            )
        )
    return findings

# NVML brand names (probe.nvml.BRAND_NAMES) that settle the GPU class when the catalogue does not know the model.
_BRAND_CLASS = {"tesla": "data-center", "geforce": "consumer", "geforcertx": "consumer", "titan": "consumer", "titanrtx": "consumer"}


def _gpu_class(host: HostView, gpu: GpuFacts) -> Optional[str]:
    model = host.model(gpu)
    if model is not None:
        return model.brand_class
    return _BRAND_CLASS.get(gpu.brand or "")


def check_forward_compat(ctx: CheckContext) -> list[Finding]:
    """cuda-compat: a newer CUDA on an older driver branch, for data-center GPUs only."""
    host, facts, table = ctx.host, ctx.facts, ctx.table
    forward = table.forward_compat
    if forward is None or not facts.nvml_ok:
        return []
    gpus = host.gpus_in_scope
    classes = {gpu.index: _gpu_class(host, gpu) for gpu in gpus}
    unsupported = [g for g in gpus if classes[g.index] is not None and classes[g.index] not in forward.brand_classes]
    source = table.cite(forward.source)
    findings = []
    active = _active_compat_cuda(host)
    native = facts.driver.cuda_driver_version or "unknown"
    where = _compat_where(host)
    if active is not None and unsupported:
        names = ", ".join(gpu_label(g) for g in unsupported)
        findings.append(
            Finding(
                code="driver-forward-compat-unsupported-gpu",
                severity=FAIL,
                title=f"A cuda-compat libcuda (CUDA {active}) is in effect, but {names} cannot use forward compatibility",
                detail=f"{where} provides CUDA {active}, newer than the driver's own CUDA {native}: it is a "
                    f"forward-compatibility package. CUDA programs here fail with CUDA error 804, \"forward compatibility "
                    f"was attempted on non supported HW\" (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE): NVIDIA supports "
                    "forward compatibility on data-center GPUs, select NGC Server Ready RTX cards and Jetson only.",
                hint="Take the cuda-compat libraries out of the loader's path (remove "
                    + (f"{host.forward_compat_directory} from " if host.forward_compat_directory else "the compat directory from ")
                    + "LD_LIBRARY_PATH and /etc/ld.so.conf.d, then run ldconfig; or uninstall the cuda-compat package) and "
                    "upgrade the driver instead; or hide these GPUs with CUDA_VISIBLE_DEVICES.",
                source=source,
            )
        )
    elif active is not None and not host.forward_compat_counts:
        findings.append(
            Finding(
                code="driver-forward-compat-active",
                severity=INFO,
                title=f"A cuda-compat libcuda (CUDA {active}) is in effect; whether these GPUs can use it is not known",
                detail=f"{where} provides CUDA {active}, newer than the driver's own CUDA {native}; the table does not know "
                    "the class of every GPU in scope, so its CUDA is not counted for the driver support. " + forward.note,
                source=source,
            )
        )
    elif active is not None:
        driver = host.driver
        listed = forward.supported_on(driver.branch, active) if driver is not None else None
        if driver is not None and listed is not True:
            findings.append(
                Finding(
                    code="driver-forward-compat-active",
                    severity=WARN,
                    title=f"CUDA forward compatibility is in effect (CUDA {active}), on a branch NVIDIA does not support it on",
                    detail=f"{where} lifts driver {driver} (CUDA {native}) to CUDA {active} on these data-center GPUs, and "
                        "CUDA builds up to it are judged with it; but "
                        + (f"R{driver.branch} is not in NVIDIA's forward-compatibility matrix (end of life, or a New Feature Branch)"
                           if listed is None else f"NVIDIA's matrix does not list cuda-compat {active} for R{driver.branch}")
                        + f". It may work, as users report, without NVIDIA's support. {forward.note}",
                    hint=f"Move to a driver branch NVIDIA supports (`cudadoctor table` lists the matrix), or to a driver that "
                        f"supports CUDA {active} itself.",
                    source=source,
                )
            )
        else:
            findings.append(
                Finding(
                    code="driver-forward-compat-active",
                    severity=INFO,
                    title=f"CUDA forward compatibility is in effect: the libcuda programs load supports CUDA {active}",
                    detail=f"The driver's own CUDA is {native}; {where} lifts it to {active} on these data-center GPUs, "
                        f"and CUDA builds up to it are judged with it. {forward.note}",
                    source=source,
                )
            )
    cuda = ctx.target_cuda
    if cuda is None or not gpus or active is not None or ngc.ngc_target(ctx) is not None:
        return findings  # an NGC container ships cuda-compat: the ngc check judges it
    if host.support(cuda).tier != "too-old":
        return findings
    package = forward.package_for(cuda.major_minor)
    driver = host.driver
    branch_ok = forward.supported_on(driver.branch, cuda) if driver is not None else None
    # A branch past its end of life (or a New Feature Branch) is no target, in the matrix or not.
    row = forward.branch(driver.branch) if driver is not None else None
    branch_dead = row is not None and not row.live_on(table.reference_date(ctx.today, facts.probed_at))
    toolkit = table.toolkit_architectures_for(cuda)
    too_old_gpus = [
        g for g in gpus if toolkit is not None and (cc := host.cc(g)) is not None and not toolkit.supports(cc)
    ]
    if unsupported:
        names = ", ".join(gpu_label(g) for g in unsupported)
        why, reason = f"{names} is not a data-center GPU", f"{forward.note} Only a driver upgrade makes CUDA {cuda.major_minor} run on it."
    elif too_old_gpus and toolkit is not None:
        names = ", ".join(gpu_label(g) for g in too_old_gpus)
        why = f"CUDA {cuda.major_minor} cannot target {names}"
        reason = (
            f"CUDA {cuda.major_minor} builds for {toolkit.min_cc.sm} to {toolkit.max_cc.sm}; no driver or compat "
            "package changes that."
        )
    elif driver is not None and branch_ok is None:
        why = f"driver branch R{driver.branch} is not in NVIDIA's forward-compatibility matrix"
        reason = f"{forward.note} Only a driver upgrade makes CUDA {cuda.major_minor} run here."
    elif driver is not None and row is not None and branch_dead:
        why = f"driver branch R{driver.branch} is no longer a supported branch"
        reason = (
            f"{row.lifecycle()} (NVIDIA's data-center driver pages, \"Supported Drivers and CUDA Toolkit Versions\"); "
            f"forward compatibility is a target only on a live Long Term Support or Production Branch. "
            f"Only a driver upgrade makes CUDA {cuda.major_minor} run here."
        )
    elif driver is not None and branch_ok is False:
        why = f"NVIDIA does not support {package} on driver branch R{driver.branch}"
        reason = f"NVIDIA's matrix lists the cuda-compat packages each branch takes; {package} is not one for R{driver.branch}."
    elif driver is not None and all(classes[g.index] is not None for g in gpus):
        findings.append(
            Finding(
                code="driver-forward-compat-available",
                severity=INFO,
                title=f"These data-center GPUs can run CUDA {cuda.major_minor} on driver branch R{driver.branch} through {package}",
                detail=f"Forward compatibility installs a newer libcuda beside the older kernel driver; NVIDIA's matrix "
                    f"supports {package} on R{driver.branch}. {forward.note}",
                hint=f"Install `{package}` from NVIDIA's CUDA repository and put /usr/local/cuda-{cuda.major_minor}/compat "
                    "on LD_LIBRARY_PATH (NVIDIA's CUDA images do this), or upgrade the driver.",
                source=source,
            )
        )
        return findings
    else:
        return findings  # a GPU of unknown class: no claim either way
    findings.append(
        Finding(
            code="driver-forward-compat-unavailable",
            severity=INFO,
            title=f"cuda-compat cannot help here: {why}",
            detail=reason,
            hint=_upgrade_words(host, host.support(cuda), cuda),
            source=source,
        )
    )
    return findings


def _active_compat_cuda(host: HostView) -> Optional[CudaVersion]:
    """The CUDA of the forward-compatibility libcuda in effect, newer than the driver's own (host/view.py)."""
    return host.forward_compat_cuda


def _compat_where(host: HostView) -> str:
    """Where the forward-compatibility libcuda in effect was seen, as a sentence's subject."""
    how, directory = host.forward_compat_how, host.forward_compat_directory
    place = f" in {directory}" if directory else ""
    # Only the sentence asked for is worded (every host's forward-compat check asks, most with nothing in effect).
    return _COMPAT_WHERE.get(how or "", "A cuda-compat libcuda{place}").format(place=place)


_COMPAT_WHERE = {
    "loaded": "The libcuda.so.1 programs load{place}",
    "LD_LIBRARY_PATH": "A cuda-compat libcuda{place}, on LD_LIBRARY_PATH,",
    "ld.so.conf": "A cuda-compat libcuda{place}, in the loader's configuration (/etc/ld.so.conf.d),",
    "image": "The image's cuda-compat libcuda{place}",
    "what-if": "The cuda-compat libcuda of --forward-compat{place}",
}


def _upgrade_words(host: HostView, support: DriverSupport, cuda: CudaVersion) -> str:
    """"Upgrade the NVIDIA driver to >= X (>= Y for full CUDA Z support), or ...": the fix for a driver too old for
    ``cuda``, or pick a variant built for an older CUDA; where X is past the last driver branch the GPUs
    in scope can run, that no driver will do."""
    older = "pick a variant built for an older CUDA (`cudadoctor recommend`)."
    floor = support.compat_min or support.full_min
    if floor is None:
        return f"Upgrade the NVIDIA driver to one that supports CUDA {cuda.major_minor}, or {older}"
    ceiling = host.driver_ceiling()
    if ceiling is not None and host.past_ceiling(floor):
        return f"No driver these GPUs can run supports CUDA {cuda.major_minor} (it needs >= {floor}, and {ceiling.words()}): {older}"
    return f"Upgrade the NVIDIA driver to >= {floor}" + full_support_clause(host, support, cuda, floor) + f", or {older}"


def _text(value: object) -> Optional[str]:
    return None if value is None else str(value)
