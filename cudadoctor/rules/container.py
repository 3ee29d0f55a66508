"""Containers: is Docker usable, can it give a container GPUs, will the image's requirements pass?

Requirement verdicts come from cudadoctor.requirements, which evaluates them exactly as
libnvidia-container does at ``docker run --gpus all``. Pure: facts in, findings out.
"""

from __future__ import annotations

from typing import Optional

from ..facts import DockerFacts, HostFacts, ImageFacts
from ..findings import FAIL, INFO, OK, WARN, Finding
from ..hostview import gpu_cc
from ..requirements import (
    MAX_REQUIREMENTS,
    Device,
    HostValues,
    Outcome,
    cli_error_line,
    image_requirements,
    evaluate_requirements,
    visible_devices_meaning,
)
from ..table import CompatTable
from ..target import Target
from ..versions import CudaVersion, VersionError

NO_GPU_DRIVER = 'could not select device driver "" with capabilities: [[gpu]]'
TOOLKIT_SOURCE = "NVIDIA Container Toolkit and libnvidia-container (nvidia-container-cli requirement checks)"
DOCKER_SOURCE = "Docker Engine API on this host"
CDI_CAVEAT = (
    "Only the legacy hook path (`docker run --gpus`, or `--runtime=nvidia` in legacy mode) checks "
    "requirements: with toolkit >= 1.18 `--runtime=nvidia` (jit-cdi mode) and CDI devices "
    "(`--device nvidia.com/gpu=all`) skip the check, so the container starts and CUDA fails at "
    "initialisation instead (error 803/804)."
)
_ARCH_ALIASES = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "ppc64le": "ppc64le", "s390x": "s390x"}


def _docker_fix(state: str) -> str:
    if state == "permission-denied":
        return (
            "Add yourself to the docker group (`sudo usermod -aG docker $USER`, then log in again) or "
            "use rootless Docker (`dockerd-rootless-setuptool.sh install`, DOCKER_HOST=unix://$XDG_RUNTIME_DIR/docker.sock)."
        )
    return (
        "Start the daemon (`sudo systemctl start docker`) or point DOCKER_HOST at a running one; "
        "`docker info` should answer."
    )


def _smoke_error(target: Optional[Target]) -> Optional[str]:
    image = target.image_facts if target else None
    return image.smoke.error if image and image.smoke and image.smoke.error else None


def check_docker(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    docker = facts.docker
    if docker is None:
        return []
    endpoint = docker.host or "the default socket"
    if docker.state == "permission-denied":
        return [
            Finding(
                "docker-permission-denied",
                FAIL,
                f"Docker socket {endpoint}: permission denied",
                f"The daemon's socket exists but this user may not use it: {docker.error or 'permission denied'}. "
                "`docker` commands fail with \"permission denied while trying to connect to the Docker daemon socket\".",
                _docker_fix(docker.state),
                DOCKER_SOURCE,
                "docker",
            )
        ]
    if docker.state != "ok":
        waited = f" within {docker.timeout_s:g} s" if docker.state == "timeout" and docker.timeout_s else ""
        return [
            Finding(
                "docker-unreachable",
                FAIL,
                f"Docker daemon at {endpoint} did not answer{waited}",
                docker.error or f"state: {docker.state}",
                _docker_fix(docker.state),
                DOCKER_SOURCE,
                "docker",
            )
        ]
    runtimes = ", ".join(docker.runtimes) or "none"
    findings = [
        Finding(
            "docker-ok",
            OK,
            f"Docker {docker.server_version or '(version unknown)'} answers at {endpoint}",
            f"Runtimes: {runtimes}; default runtime: {docker.default_runtime or 'unknown'}.",
            "",
            DOCKER_SOURCE,
            "docker",
        )
    ]
    findings.append(_gpu_runtime(docker, _smoke_error(target)))
    return findings


def _gpu_runtime(docker: DockerFacts, smoke_error: Optional[str]) -> Finding:
    hook = any(path.endswith("/nvidia-container-runtime-hook") for path in docker.toolkit_binaries)
    registered = "nvidia" in docker.runtimes
    cdi = bool(docker.cdi_nvidia_specs)
    refused = smoke_error is not None and "could not select device driver" in smoke_error
    fix = (
        "Install the NVIDIA Container Toolkit (package nvidia-container-toolkit), then "
        "`sudo nvidia-ctk runtime configure --runtime=docker` and `sudo systemctl restart docker`."
    )
    if refused or not (hook or registered or cdi):
        seen = [
            f"runtimes: {', '.join(docker.runtimes) or 'none'}",
            "no nvidia-container-runtime-hook on this host" if docker.daemon_local else "the daemon is remote",
            f"CDI specs for nvidia.com/gpu: {', '.join(docker.cdi_nvidia_specs) or 'none'}",
        ]
        said = f"Docker answered: {smoke_error}. " if refused else ""
        return Finding(
            "nvidia-runtime-missing",
            FAIL,
            "Docker cannot give containers GPUs: no NVIDIA runtime",
            f"{said}`docker run --gpus all` fails with `{NO_GPU_DRIVER}` "
            f"({'; '.join(seen)}).",
            fix,
            DOCKER_SOURCE,
            "docker",
        )
    how = []
    if registered:
        how.append("runtime `nvidia` registered" + (" (default)" if docker.default_runtime == "nvidia" else ""))
    if hook:
        how.append("nvidia-container-runtime-hook installed (`--gpus`)")
    if cdi:
        how.append(f"CDI spec {', '.join(docker.cdi_nvidia_specs)}")
    mode = f"; toolkit mode {docker.toolkit_mode}" if docker.toolkit_mode else ""
    return Finding("nvidia-runtime-ok", OK, "Docker can give containers GPUs", "; ".join(how) + mode + ".", "", DOCKER_SOURCE, "docker")


# --- the image ---------------------------------------------------------------------------------


def _platform(value: Optional[str]) -> Optional[str]:
    return _ARCH_ALIASES.get(value, value) if value else None


def check_image(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    image = target.image_facts if target else None
    if target is None or image is None:
        return []
    ref = image.reference
    if image.state == "not-found":
        known = image.facts_from == "table"
        detail = f"The Docker daemon has no image {ref} ({image.error or 'no such image'})."
        if known:
            detail += f" The table knows this tag: judged from the table as PyTorch {target.torch} {target.variant}."
        return [
            Finding(
                "image-not-found",
                WARN if known else FAIL,
                f"Image {ref} is not present locally",
                detail,
                f"Pull it with `docker pull {ref}` (or run with --pull), then check again.",
                DOCKER_SOURCE,
                "image",
            )
        ]
    if image.state == "pull-failed":
        return [
            Finding("image-pull-failed", FAIL, f"Pulling {ref} failed", image.error or "", f"Run `docker pull {ref}` to see the registry's answer.", DOCKER_SOURCE, "image")
        ]
    if image.state != "ok":
        known = image.facts_from == "table"
        detail = image.error or image.state
        if known:
            detail += f". The table knows this tag: judged from the table as PyTorch {target.torch} {target.variant}."
        return [
            Finding(
                "image-inspect-failed",
                WARN if known else FAIL,
                f"Cannot inspect image {ref}",
                detail,
                f"Make the Docker daemon answer, then run `docker image inspect {ref}`.",
                DOCKER_SOURCE,
                "image",
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
            "image-ok",
            INFO,
            f"Image {ref}: {platform}" + (f", {', '.join(holds)}" if holds else ""),
            f"Read from {source}; id {image.id or 'unknown'}.",
            "",
            DOCKER_SOURCE,
            "image",
        )
    )
    host_arch = _platform(facts.docker.architecture) if facts.docker else None
    host_os = facts.docker.os_type if facts.docker else None
    image_arch = _platform(image.architecture)
    if (host_arch and image_arch and host_arch != image_arch) or (host_os and image.os and host_os != image.os):
        findings.append(
            Finding(
                "image-platform-mismatch",
                FAIL,
                f"Image {ref} is {image.os}/{image.architecture}, the Docker host is {host_os}/{host_arch}",
                "Its programs cannot run here: the container exits with \"exec format error\" (or runs slowly under emulation, without GPU access).",
                f"Pull the image's {host_os}/{host_arch} variant: `docker pull --platform {host_os}/{host_arch} {ref}`.",
                DOCKER_SOURCE,
                "image",
            )
        )
    if not target.torch:
        findings.append(
            Finding(
                "image-torch-unknown",
                INFO,
                f"No PyTorch release recognised in {ref}",
                "Neither PYTORCH_VERSION nor the tag names a release the table knows, so only the driver and the "
                "image's requirements are judged, not the GPU architectures its PyTorch was built for.",
                "Use --smoke to run the image once, or a newer table (--table).",
                DOCKER_SOURCE,
                "image",
            )
        )
    return findings


# --- requirements ---------------------------------------------------------------------------------


def host_values(facts: HostFacts, table: CompatTable) -> HostValues:
    """What nvidia-container-cli compares against, for `docker run --gpus all` (every GPU)."""
    cuda = facts.driver.cuda_driver_version
    if cuda:
        try:
            cuda = str(CudaVersion.parse(cuda).major_minor)  # NVML gives major.minor only
        except VersionError:
            pass
    devices = []
    for gpu in facts.gpus:
        cc = gpu_cc(gpu, table)
        devices.append(Device(arch=str(cc) if cc else None, brand=gpu.brand, label=f"GPU {gpu.index} ({gpu.name or 'unknown'})"))
    return HostValues(cuda=cuda or None, driver=facts.driver.driver_version, devices=tuple(devices))


def _upgrade_hint(table: CompatTable, outcome: Outcome) -> str:
    first = outcome.requirement.split(" ", 1)[0]
    if first.startswith("cuda>="):
        try:
            cuda = CudaVersion.parse(first[len("cuda>="):].split(",", 1)[0])
        except VersionError:
            cuda = None
        row = table.min_driver_full(cuda) if cuda else None
        if row is not None:
            return (
                f"Upgrade the NVIDIA driver to >= {row.min_driver_linux} (CUDA {cuda.major_minor}), or use an image "
                "built for the CUDA version the driver supports (`cudadoctor recommend --image`). "
            )
    return "Use an image whose requirements this host meets, or change the host to meet them. "


def _host_line(values: HostValues) -> str:
    gpus = "; ".join(f"{d.label}: arch {d.arch or 'unknown'}, brand {d.brand or 'unknown'}" for d in values.devices)
    return f"host: cuda {values.cuda or 'unknown'}, driver {values.driver or 'unknown'}" + (f"; {gpus}" if gpus else "; no GPU (checked once, globally)")


def _requirement_findings(table: CompatTable, values: HostValues, named: list[tuple[str, str]], where: str) -> list[Finding]:
    findings = []
    outcomes = evaluate_requirements([value for _, value in named], values)
    passed = []
    for (name, value), outcome in zip(named, outcomes):
        on = f" (on {outcome.device.label})" if outcome.device is not None and outcome.device.label else ""
        if outcome.invalid:
            findings.append(
                Finding(
                    "image-requirement-invalid",
                    FAIL,
                    f"{where} {name} is not a valid requirement",
                    f"{cli_error_line(outcome)}: condition {outcome.invalid_condition!r}: {outcome.invalid_reason}. "
                    f"The container is refused whatever the host. Value: {value!r}.",
                    "Fix the requirement (rules cuda, driver, arch, brand; operators = != < <= > >=; a space "
                    "separates alternatives, a comma joins conditions), or set NVIDIA_DISABLE_REQUIRE=true to skip the check.",
                    TOOLKIT_SOURCE,
                    "image",
                )
            )
        elif not outcome.satisfied:
            actual = f" The condition that failed{on}: {outcome.failed_condition}." if outcome.failed_condition else ""
            findings.append(
                Finding(
                    "image-requirement-unsatisfied",
                    FAIL,
                    f"{where} {name} is not met by this host",
                    f"`docker run --gpus all` is refused: {cli_error_line(outcome)}.{actual} ({_host_line(values)}.)",
                    _upgrade_hint(table, outcome) + CDI_CAVEAT,
                    TOOLKIT_SOURCE,
                    "image",
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
                "image-requirements-ok",
                WARN if brand_blind else OK,
                f"{where} requirements met: {', '.join(passed)}"
                + (" (unless the GPU's brand decides)" if brand_blind else ""),
                f"nvidia-container-cli would accept them ({_host_line(values)})."
                + (
                    " A GPU's brand is unknown here, so brand= conditions were counted as satisfied; on the "
                    "real GPU its brand (tesla, geforce, nvidia, ...) may refuse the container."
                    if brand_blind
                    else ""
                ),
                "Check on the real host, or on a snapshot taken there (`cudadoctor probe --output`)." if brand_blind else "",
                TOOLKIT_SOURCE,
                "image",
            )
        )
    return findings


def check_requirements(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    if target is None:
        return []
    image = target.image_facts
    from_image = image is not None and image.state == "ok"
    if not from_image and not target.requirements:
        return []
    if not facts.nvml_ok:
        return [
            Finding(
                "image-requirements-unchecked",
                INFO,
                "Requirements not evaluated: the driver is unknown",
                "NVML did not answer, so the driver and CUDA versions the requirements compare against are unknown "
                "(nvidia-container-cli itself would fail to start).",
                "Fix the NVML finding first, or give --driver and --gpu to plan.",
                TOOLKIT_SOURCE,
                "image",
            )
        ]
    values = host_values(facts, table)
    findings: list[Finding] = []
    if target.requirements:
        named = [(f"--require {value!r}", value) for value in target.requirements]
        findings += _requirement_findings(table, values, named, "Requirement")
    if from_image and image is not None:
        findings += _image_requirement_findings(facts, table, values, image)
    return findings


def _image_requirement_findings(facts: HostFacts, table: CompatTable, values: HostValues, image: ImageFacts) -> list[Finding]:
    env = dict(image.env)
    collected = image_requirements(env)
    findings = [_visible_devices_finding(facts, env, collected.legacy)]
    where = f"Image {image.reference}:"
    if collected.disabled:
        findings.append(
            Finding(
                "image-requirements-disabled",
                INFO,
                f"{where} NVIDIA_DISABLE_REQUIRE={env.get('NVIDIA_DISABLE_REQUIRE')!s} turns the requirement check off",
                "The toolkit passes no requirement to nvidia-container-cli; a driver too old for the image shows only "
                "when CUDA initialises inside the container.",
                "",
                TOOLKIT_SOURCE,
                "image",
            )
        )
        return findings
    if facts.docker is not None and facts.docker.toolkit_disable_require:
        findings.append(
            Finding(
                "image-requirements-disabled",
                INFO,
                "disable-require = true in the toolkit's config.toml turns the requirement check off",
                "The hook injects NVIDIA_DISABLE_REQUIRE=true into every container; the verdicts below are what the check would say.",
                "",
                TOOLKIT_SOURCE,
                "image",
            )
        )
    if collected.legacy_error is not None:
        findings.append(
            Finding(
                "image-requirement-invalid",
                FAIL,
                f"{where} CUDA_VERSION={collected.legacy_error!r} cannot be read",
                "The image has no NVIDIA_REQUIRE_CUDA, so the toolkit derives cuda>=MAJOR.MINOR from CUDA_VERSION, "
                "and it aborts the container start when that is not a version (\"invalid CUDA version\").",
                "Set CUDA_VERSION to a version such as 12.8.1, or add NVIDIA_REQUIRE_CUDA.",
                TOOLKIT_SOURCE,
                "image",
            )
        )
    if not collected.requirements:
        if collected.legacy_error is None:
            findings.append(
                Finding(
                    "image-no-requirements",
                    INFO,
                    f"{where} no NVIDIA_REQUIRE_* and no CUDA_VERSION: nothing is checked at start",
                    "The toolkit lets the container start on any driver; a driver too old for the CUDA inside "
                    "(pip wheels, for instance) shows only at runtime (torch.cuda.is_available() is False).",
                    "",
                    TOOLKIT_SOURCE,
                    "image",
                )
            )
        return findings
    named = list(collected.requirements)
    if len(named) > MAX_REQUIREMENTS:
        findings.append(
            Finding(
                "image-requirement-invalid",
                FAIL,
                f"{where} {len(named)} requirement variables (nvidia-container-cli takes at most {MAX_REQUIREMENTS})",
                "nvidia-container-cli: input error: too many requirements",
                "Merge the NVIDIA_REQUIRE_* variables.",
                TOOLKIT_SOURCE,
                "image",
            )
        )
        return findings
    findings += _requirement_findings(table, values, named, where)
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
        "image-visible-devices",
        INFO,
        f"NVIDIA_VISIBLE_DEVICES {value}: {meaning.meaning}",
        f"Requirements above are judged as for `docker run --gpus all`, which sets NVIDIA_VISIBLE_DEVICES=all. "
        f"{effect}: {meaning.meaning}.",
        "",
        TOOLKIT_SOURCE,
        "image",
    )


# --- the smoke run ---------------------------------------------------------------------------------


def check_smoke(facts: HostFacts, table: CompatTable, target: Optional[Target]) -> list[Finding]:
    image = target.image_facts if target else None
    smoke = image.smoke if image else None
    if image is None or smoke is None:
        return []
    ref = image.reference
    ok = smoke.ran and smoke.exit_code == 0 and smoke.cuda_available and smoke.cuda_op_ok and not smoke.error
    if ok:
        return [
            Finding(
                "image-smoke-ok",
                OK,
                f"{ref} ran with GPUs: torch {smoke.torch_version}, {smoke.device_count} GPU(s), a CUDA op worked",
                f"torch.version.cuda {smoke.torch_cuda}.",
                "",
                "docker run --gpus all on this host",
                "image",
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
            "image-smoke-failed",
            FAIL,
            f"{ref} did not run with GPUs",
            f"{why} {'; '.join(said)}",
            hint,
            "docker run --gpus all on this host",
            "image",
        )
    ]
