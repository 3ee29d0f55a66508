"""Image: the image's platform and contents, its NVIDIA_REQUIRE_* requirements (or --require) as
nvidia-container-cli evaluates them at ``docker run --gpus all``, and the smoke run.

Requirement verdicts come from cudadoctor.model.nvidia_require, which follows libnvidia-container's
semantics exactly. Pure: facts in, findings out.
"""

from __future__ import annotations

from typing import Optional

from ..compat.table import CompatTable
from ..host.view import HostView, out_of_reach
from ..model.facts import HostFacts, ImageFacts
from ..model.findings import FAIL, INFO, OK, WARN, Finding
from ..model.target import Target
from ..model.nvidia_require import (
    MAX_REQUIREMENTS,
    Device,
    HostValues,
    Outcome,
    cli_error_line,
    evaluate_requirements,
    image_requirements,
    visible_devices_meaning,
)
from ..model.versions import CudaVersion, VersionError
from .context import CheckContext
from .docker import DOCKER_SOURCE

TOOLKIT_SOURCE = "NVIDIA Container Toolkit and libnvidia-container (nvidia-container-cli requirement checks)"

CDI_CAVEAT = (
    "Only the legacy hook path (`docker run --gpus`, or `--runtime=nvidia` in legacy mode) checks "
    "requirements: with toolkit >= 1.18 `--runtime=nvidia` (jit-cdi mode) and CDI devices "
    "(`--device nvidia.com/gpu=all`) skip the check, so the container starts and CUDA fails at "
    "initialisation instead (error 803/804)."
)

_ARCH_ALIASES = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x"}


def _platform(value: Optional[str]) -> Optional[str]:
    return _ARCH_ALIASES.get(value, value) if value else None


def check_image(ctx: CheckContext) -> list[Finding]:
    facts, target = ctx.facts, ctx.target
    image = target.image_facts if target else None
    if target is None or image is None:
        return []
    ref = image.reference
    if image.state == "not-found":
        # Not pulled yet is not an error: `docker run` pulls a missing image (--pull=missing is its
        # default). What the reference says is judged; what only the image itself says (its
        # NVIDIA_REQUIRE_*, its user, its files) waits for the pull. A reference that cannot exist
        # never gets here: it is refused as the user's input (exit 2).
        return [
            Finding(
                code="image-not-found",
                severity=INFO,
                title=f"Image {ref} is not pulled yet: `docker run` pulls it",
                detail=f"The Docker daemon has no image {ref} yet ({image.error or 'no such image'}). "
                    f"{judged_from_reference(target)}",
                hint=f"To judge the image itself too (its NVIDIA_REQUIRE_CUDA, its user, its files), pull it first "
                    f"with `docker pull {ref}`, or check with --pull.",
                source=DOCKER_SOURCE,
            )
        ]
    if image.state == "pull-failed":
        return [
            Finding(
                code="image-pull-failed",
                severity=FAIL,
                title=f"Pulling {ref} failed",
                detail=image.error or "",
                hint=f"Run `docker pull {ref}` to see the registry's answer.",
                source=DOCKER_SOURCE,
            )
        ]
    if image.state != "ok":
        known = image.facts_from == "table"
        detail = image.error or image.state
        if known:
            detail += f". The table knows this tag: judged from the table as PyTorch {target.torch} {target.variant}."
        return [
            Finding(
                code="image-inspect-failed",
                severity=WARN if known else FAIL,
                title=f"Cannot inspect image {ref}",
                detail=detail,
                hint=f"Make the Docker daemon answer, then run `docker image inspect {ref}`.",
                source=DOCKER_SOURCE,
            )
        ]
    findings = []
    platform = "/".join(p for p in (image.os, image.architecture, image.variant) if p) or "platform unknown"
    holds = []
    if target.torch:
        holds.append(f"PyTorch {target.torch}")
    if target.cuda:
        holds.append(f"CUDA {target.cuda} ({target.variant})")
    source = {"image-env": "its environment", "image-tag": "its tag", "table": "the table"}.get(image.facts_from or "", "nothing")
    findings.append(
        Finding(
            code="image-ok",
            severity=INFO,
            title=f"Image {ref}: {platform}" + (f", {', '.join(holds)}" if holds else ""),
            detail=f"Read from {source}; id {image.id or 'unknown'}.",
            source=DOCKER_SOURCE,
        )
    )
    host_arch = _platform(facts.docker.architecture) if facts.docker else None
    host_os = facts.docker.os_type if facts.docker else None
    image_arch = _platform(image.architecture)
    if (host_arch and image_arch and host_arch != image_arch) or (host_os and image.os and host_os != image.os):
        findings.append(
            Finding(
                code="image-platform-mismatch",
                severity=FAIL,
                title=f"Image {ref} is {image.os}/{image.architecture}, the Docker host is {host_os}/{host_arch}",
                detail="Its programs cannot run here: the container exits with \"exec format error\" (or runs slowly under emulation, without GPU access).",
                hint=f"Pull the image's {host_os}/{host_arch} variant: `docker pull --platform {host_os}/{host_arch} {ref}`.",
                source=DOCKER_SOURCE,
            )
        )
    if not target.torch:
        findings.append(
            Finding(
                code="image-torch-unknown",
                severity=INFO,
                title=f"No PyTorch release recognised in {ref}",
                detail="Neither PYTORCH_VERSION nor the tag names a release the table knows, so only the driver and the "
                    "image's requirements are judged, not the GPU architectures its PyTorch was built for.",
                hint="Use --smoke to run the image once, or a newer table (--table).",
                source=DOCKER_SOURCE,
            )
        )
    return findings


def judged_from_reference(target: Target) -> str:
    """What was judged of an image that is not here, and from what: the table's facts for a tag it
    knows, else what the tag names, else nothing of PyTorch or CUDA."""
    image = target.image_facts
    where = image.facts_from if image is not None else None
    holds = ([f"PyTorch {target.torch}"] if target.torch else []) + ([f"CUDA {target.cuda} ({target.variant})"] if target.cuda else [])
    if where == "table" and holds:
        return f"The table knows this tag: judged from the table as {', '.join(holds)}."
    if where == "image-tag" and holds:
        return f"Judged from its tag as {', '.join(holds)}."
    return ("Its reference names no PyTorch release or CUDA version the table knows, so neither is judged until "
            "the image is here; the host, Docker and the run line are.")


def host_values(host: HostView) -> HostValues:
    """What nvidia-container-cli compares against, for `docker run --gpus all` (every GPU)."""
    facts = host.facts
    # NVML gives major.minor only; text NVML did not give as a version is compared as it is.
    cuda = str(host.nvml_cuda) if host.nvml_cuda else facts.driver.cuda_driver_version
    devices = []
    for gpu in facts.gpus:
        cc = host.cc(gpu)
        devices.append(Device(arch=str(cc) if cc else None, brand=gpu.brand, label=f"GPU {gpu.index} ({gpu.name or 'unknown'})"))
    return HostValues(cuda=cuda or None, driver=facts.driver.driver_version, devices=tuple(devices))


def _upgrade_hint(table: CompatTable, outcome: Outcome, host: Optional[HostView] = None) -> str:
    first = outcome.requirement.split(" ", 1)[0]
    if first.startswith("cuda>="):
        try:
            cuda = CudaVersion.parse(first[len("cuda>="):].split(",", 1)[0])
        except VersionError:
            cuda = None
        row = table.min_driver_full(cuda) if cuda else None
        if row is not None and cuda is not None:
            past = out_of_reach(host, row.min_driver_linux) if host is not None else None
            upgrade = f"{past}: use" if past else f"Upgrade the NVIDIA driver to >= {row.min_driver_linux} (CUDA {cuda.major_minor}), or use"
            return f"{upgrade} an image built for the CUDA version the driver supports (`cudadoctor recommend --image`). "
    return "Use an image whose requirements this host meets, or change the host to meet them. "


def _host_line(values: HostValues) -> str:
    gpus = "; ".join(f"{d.label}: arch {d.arch or 'unknown'}, brand {d.brand or 'unknown'}" for d in values.devices)
    return f"host: cuda {values.cuda or 'unknown'}, driver {values.driver or 'unknown'}" + (f"; {gpus}" if gpus else "; no GPU (checked once, globally)")


def _requirement_findings(
    table: CompatTable, values: HostValues, named: list[tuple[str, str]], where: str, host: Optional[HostView] = None
) -> list[Finding]:
    findings = []
    outcomes = evaluate_requirements([value for _, value in named], values)
    passed = []
    for (name, value), outcome in zip(named, outcomes):
        on = f" (on {outcome.device.label})" if outcome.device is not None and outcome.device.label else ""
        if outcome.invalid:
            findings.append(
                Finding(
                    code="image-requirement-invalid",
                    severity=FAIL,
                    title=f"{where} {name} is not a valid requirement",
                    detail=f"{cli_error_line(outcome)}: condition {outcome.invalid_condition!r}: {outcome.invalid_reason}. "
                        f"The container is refused whatever the host. Value: {value!r}.",
                    hint="Fix the requirement (rules cuda, driver, arch, brand; operators = != < <= > >=; a space "
                        "separates alternatives, a comma joins conditions), or set NVIDIA_DISABLE_REQUIRE=true to skip the check.",
                    source=TOOLKIT_SOURCE,
                )
            )
        elif not outcome.satisfied:
            actual = f" The condition that failed{on}: {outcome.failed_condition}." if outcome.failed_condition else ""
            findings.append(
                Finding(
                    code="image-requirement-unsatisfied",
                    severity=FAIL,
                    title=f"{where} {name} is not met by this host",
                    detail=f"`docker run --gpus all` is refused: {cli_error_line(outcome)}.{actual} ({_host_line(values)}.)",
                    hint=_upgrade_hint(table, outcome, host) + CDI_CAVEAT,
                    source=TOOLKIT_SOURCE,
                )
            )
        else:
            passed.append(name)
    if passed:
        # A GPU given with --gpu has no NVML brand; a brand= condition then counts as satisfied (as
        # nvidia-container-cli does with a value it cannot read), which the real GPU may not confirm.
        values_by_name = dict(named)
        brand_blind = any(d.brand is None for d in values.devices) and any(
            "brand" in values_by_name[name].lower() for name in passed
        )
        findings.append(
            Finding(
                code="image-requirements-ok",
                severity=WARN if brand_blind else OK,
                title=f"{where} requirements met: {', '.join(passed)}"
                    + (" (unless the GPU's brand decides)" if brand_blind else ""),
                detail=f"nvidia-container-cli would accept them ({_host_line(values)})."
                    + (
                        " A GPU's brand is unknown here, so brand= conditions were counted as satisfied; on the "
                        "real GPU its brand (tesla, geforce, nvidia, ...) may refuse the container."
                        if brand_blind
                        else ""
                    ),
                hint="Check on the real host, or on a snapshot taken there (`cudadoctor probe --output`)." if brand_blind else "",
                source=TOOLKIT_SOURCE,
            )
        )
    return findings


def check_requirements(ctx: CheckContext) -> list[Finding]:
    facts, table, target = ctx.facts, ctx.table, ctx.target
    if target is None:
        return []
    image = target.image_facts
    from_image = image is not None and image.state == "ok"
    if not from_image and not target.requirements:
        return []
    if not facts.nvml_ok:
        return [
            Finding(
                code="image-requirements-unchecked",
                severity=INFO,
                title="Requirements not evaluated: the driver is unknown",
                detail="NVML did not answer, so the driver and CUDA versions the requirements compare against are unknown "
                    "(nvidia-container-cli itself would fail to start).",
                hint="Fix the NVML finding first, or give --driver and --gpu to plan.",
                source=TOOLKIT_SOURCE,
            )
        ]
    values = host_values(ctx.host)
    findings: list[Finding] = []
    if target.requirements:
        named = [(f"--require {value!r}", value) for value in target.requirements]
        findings += _requirement_findings(table, values, named, "Requirement", ctx.host)
    if from_image and image is not None:
        findings += _image_requirement_findings(ctx, values, image)
    return findings


def _image_requirement_findings(ctx: CheckContext, values: HostValues, image: ImageFacts) -> list[Finding]:
    facts, table = ctx.facts, ctx.table
    env = dict(image.env)
    collected = image_requirements(env)
    findings = [_visible_devices_finding(facts, env, collected.legacy)]
    where = f"Image {image.reference}:"
    if collected.disabled:
        findings.append(
            Finding(
                code="image-requirements-disabled",
                severity=INFO,
                title=f"{where} NVIDIA_DISABLE_REQUIRE={env.get('NVIDIA_DISABLE_REQUIRE')!s} turns the requirement check off",
                detail="The toolkit passes no requirement to nvidia-container-cli; a driver too old for the image shows only "
                    "when CUDA initialises inside the container.",
                source=TOOLKIT_SOURCE,
            )
        )
        return findings
    if facts.docker is not None and facts.docker.toolkit_disable_require:
        findings.append(
            Finding(
                code="image-requirements-disabled",
                severity=INFO,
                title="disable-require = true in the toolkit's config.toml turns the requirement check off",
                detail="The hook injects NVIDIA_DISABLE_REQUIRE=true into every container; the verdicts below are what the check would say.",
                source=TOOLKIT_SOURCE,
            )
        )
    if collected.legacy_error is not None:
        findings.append(
            Finding(
                code="image-requirement-invalid",
                severity=FAIL,
                title=f"{where} CUDA_VERSION={collected.legacy_error!r} cannot be read",
                detail="The image has no NVIDIA_REQUIRE_CUDA, so the toolkit derives cuda>=MAJOR.MINOR from CUDA_VERSION, "
                    "and it aborts the container start when that is not a version (\"invalid CUDA version\").",
                hint="Set CUDA_VERSION to a version such as 12.8.1, or add NVIDIA_REQUIRE_CUDA.",
                source=TOOLKIT_SOURCE,
            )
        )
    if not collected.requirements:
        if collected.legacy_error is None:
            findings.append(
                Finding(
                    code="image-no-requirements",
                    severity=INFO,
                    title=f"{where} no NVIDIA_REQUIRE_* and no CUDA_VERSION: nothing is checked at start",
                    detail="The toolkit lets the container start on any driver; a driver too old for the CUDA inside "
                        "(pip wheels, for instance) shows only at runtime (torch.cuda.is_available() is False).",
                    source=TOOLKIT_SOURCE,
                )
            )
        return findings
    named = list(collected.requirements)
    if len(named) > MAX_REQUIREMENTS:
        findings.append(
            Finding(
                code="image-requirement-invalid",
                severity=FAIL,
                title=f"{where} {len(named)} requirement variables (nvidia-container-cli takes at most {MAX_REQUIREMENTS})",
                detail="nvidia-container-cli: input error: too many requirements",
                hint="Merge the NVIDIA_REQUIRE_* variables.",
                source=TOOLKIT_SOURCE,
            )
        )
        return findings
    findings += _requirement_findings(table, values, named, where, ctx.host)
    return findings


def _visible_devices_finding(facts: HostFacts, env: dict[str, str], legacy: bool) -> Finding:
    meaning = visible_devices_meaning(env, legacy)
    value = "unset" if meaning.value is None else repr(meaning.value)
    default_runtime = facts.docker.default_runtime if facts.docker else None
    if default_runtime == "nvidia":
        effect = "The default runtime is nvidia, so this applies to a plain `docker run` without --gpus"
    else:
        effect = (
            f"The default runtime is {default_runtime or 'not nvidia'}, so a plain `docker run` without --gpus "
            "gets no GPU whatever this says; with --runtime=nvidia it would mean"
        )
    return Finding(
        code="image-visible-devices",
        severity=INFO,
        title=f"NVIDIA_VISIBLE_DEVICES {value}: {meaning.meaning}",
        detail=f"Requirements above are judged as for `docker run --gpus all`, which sets NVIDIA_VISIBLE_DEVICES=all. "
            f"{effect}: {meaning.meaning}.",
        source=TOOLKIT_SOURCE,
    )


def check_smoke(ctx: CheckContext) -> list[Finding]:
    target = ctx.target
    image = target.image_facts if target else None
    smoke = image.smoke if image else None
    if image is None or smoke is None:
        return []
    ref = image.reference
    ok = smoke.ran and smoke.exit_code == 0 and smoke.cuda_available and smoke.cuda_op_ok and not smoke.error
    if ok:
        return [
            Finding(
                code="image-smoke-ok",
                severity=OK,
                title=f"{ref} ran with GPUs: torch {smoke.torch_version}, {smoke.device_count} GPU(s), a CUDA op worked",
                detail=f"torch.version.cuda {smoke.torch_cuda}.",
                source="docker run --gpus all on this host",
            )
        ]
    if smoke.error and "could not select device driver" in smoke.error:
        why = "Docker has no GPU device driver: the NVIDIA Container Toolkit is not installed or not registered (see nvidia-runtime-missing)."
        hint = "Install the NVIDIA Container Toolkit, `sudo nvidia-ctk runtime configure --runtime=docker`, restart docker."
    elif smoke.error and "requirement error" in smoke.error:
        why = "nvidia-container-cli refused the container (see image-requirement-unsatisfied)."
        hint = "Upgrade the driver or use an image for an older CUDA."
    elif smoke.ran and smoke.cuda_available is False:
        why = "The container started but torch.cuda.is_available() is False."
        hint = "Check the driver findings above; run `nvidia-smi` inside the container."
    else:
        why = "The smoke run did not complete."
        hint = f"Run `docker run --rm --gpus all {ref}` to see it fail."
    said = []
    if smoke.error:
        said.append(f"Error: {smoke.error}")
    if smoke.exit_code is not None:
        said.append(f"exit status {smoke.exit_code}")
    if smoke.output:
        said.append(f"output: {smoke.output}")
    return [
        Finding(
            code="image-smoke-failed",
            severity=FAIL,
            title=f"{ref} did not run with GPUs",
            detail=f"{why} {'; '.join(said)}",
            hint=hint,
            source="docker run --gpus all on this host",
        )
    ]
