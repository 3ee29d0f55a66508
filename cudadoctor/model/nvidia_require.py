"""NVIDIA_REQUIRE_* requirement strings, evaluated exactly as libnvidia-container evaluates them.

``nvidia-container-cli configure --require=EXPR`` refuses a container whose requirements the host
does not meet; this module reproduces its behaviour (libnvidia-container ``src/cli/dsl.c`` and
``configure.c``, the toolkit's ``internal/config/image``), quirks included, so a verdict here is the
verdict Docker would give at ``docker run --gpus all``. The behaviour was read from
NVIDIA/libnvidia-container (src/dsl.c, src/cli/configure.c, src/cli/common.c) and
NVIDIA/nvidia-container-toolkit (internal/config/image/cuda_image.go); this code is written here,
not copied. Pure: no I/O.

Grammar, as the C code reads it:
  * a single ASCII space separates alternatives (OR); empty pieces are skipped;
  * a comma separates conditions that must all hold (AND); empty pieces are skipped;
  * evaluation is left to right and short-circuits: conditions never reached are never parsed;
  * a condition is RULE OP VALUE where RULE is everything before the first of ``<>=!``, OP the
    whole run of those characters (``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, and a lone ``!``
    meaning ``!=``), VALUE the rest; rules ``cuda``, ``driver``, ``arch``, ``brand``, matched
    case-insensitively;
  * a value the host cannot provide makes the condition true without comparing anything.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

from .record import record
from .text import quoted

HINT_SUFFIX = ", please update your driver to a newer version, or use an earlier cuda container"
INVALID_MESSAGE = "invalid expression"
_OPERATOR_CHARS = frozenset("<>=!")
# The run of operator characters must equal one of these; "!" alone passes the C code's
# length-limited prefix comparison against "!=" and so means "!=".
_OPERATORS = {"=": "=", "!=": "!=", "!": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
RULES = ("cuda", "driver", "arch", "brand")
_VERSION_CHARS = frozenset("0123456789.")
_MAX_COMPONENT = 2**64 - 1  # strtoull overflow: the C code treats it as an invalid expression
_MESSAGE_BUFFER = 128  # the C code formats "rule op value" into 128 bytes; longer is invalid
MAX_REQUIREMENTS = 32  # nvidia-container-cli refuses more --require arguments than this
REQUIRE_PREFIX = "NVIDIA_REQUIRE_"
JETPACK_PREFIX = "NVIDIA_REQUIRE_JETPACK"


class RequirementError(ValueError):
    """A requirement the C implementation rejects as ``invalid expression``.

    ``token`` is the condition that was rejected and ``reason`` says why, for people; the
    toolkit itself only ever prints ``requirement error: invalid expression``.
    """

    def __init__(self, token: str, reason: str):
        super().__init__(f"invalid requirement condition {quoted(token)}: {reason}")
        self.token = token
        self.reason = reason


@record
class Device:
    """What a requirement can see of one GPU (a MIG device reports its parent's values)."""

    arch: Optional[str] = None  # compute capability "8.0"
    brand: Optional[str] = None  # libnvidia-container's brand word, any case: "tesla", "geforce"
    label: str = ""


@record
class HostValues:
    """The host values the rules compare against; ``None`` means the host cannot provide it."""

    cuda: Optional[str] = None  # the driver's CUDA version, major.minor only: "12.4"
    driver: Optional[str] = None  # "550.54.14"
    devices: tuple[Device, ...] = ()  # the GPUs the container would see


@record
class Condition:
    text: str
    rule: str  # lowercase rule name
    operator: str  # canonical operator ("!" becomes "!=")
    value: str


@record
class Outcome:
    """The verdict on one requirement string in one evaluation context."""

    requirement: str
    satisfied: bool
    invalid: bool = False
    failed_condition: Optional[str] = None  # the last condition that evaluated false
    invalid_condition: Optional[str] = None
    invalid_reason: Optional[str] = None
    device: Optional[Device] = None  # None: evaluated once, globally (no GPU visible)

    @property
    def message(self) -> str:
        """The text after ``nvidia-container-cli: requirement error: ``; empty when satisfied."""
        if self.invalid:
            return INVALID_MESSAGE
        if self.satisfied:
            return ""
        return unsatisfied_message(self.requirement)


def unsatisfied_message(requirement: str) -> str:
    """What nvidia-container-cli prints: it quotes the first space-separated token of the whole
    string (not the condition that failed) and adds the driver hint only when that token starts
    with the lowercase text ``cuda>=``."""
    first = requirement.split(" ", 1)[0]
    text = f"unsatisfied condition: {first}"
    return text + HINT_SUFFIX if first.startswith("cuda>=") else text


def cli_error_line(outcome: Outcome) -> str:
    """The whole line nvidia-container-cli writes to stderr for a failed outcome."""
    return f"nvidia-container-cli: requirement error: {outcome.message}"


# --- parsing ----------------------------------------------------------------------------------


def parse_condition(text: str) -> Condition:
    """Split one condition as the C code does; raise RequirementError for what it rejects
    whatever the host (no rule name, no or bad operator, empty value, unknown rule)."""
    start = 0
    while start < len(text) and text[start] not in _OPERATOR_CHARS:
        start += 1
    rule = text[:start]
    if not rule:
        raise RequirementError(text, "no rule name before the operator (rules: cuda, driver, arch, brand)")
    if start == len(text):
        raise RequirementError(text, "no operator (use one of = != < <= > >=; a space separates alternatives)")
    end = start
    while end < len(text) and text[end] in _OPERATOR_CHARS:
        end += 1
    run = text[start:end]
    if run not in _OPERATORS:
        raise RequirementError(text, f"{quoted(run)} is not an operator (use one of = != < <= > >=)")
    value = text[end:]
    if not value:
        raise RequirementError(text, "no value after the operator")
    name = rule.lower() if rule.isascii() else rule
    if name not in RULES:
        raise RequirementError(text, f"unknown rule {quoted(rule)} (rules: cuda, driver, arch, brand)")
    return Condition(text, name, _OPERATORS[run], value)


def _version_components(text: str, token: str) -> list[int]:
    """Dotted decimal components as the C comparison walks them (runs of dots separate; leading
    zeros ignored; a leading dot, any other character or an overflowing number is invalid)."""
    if not set(text) <= _VERSION_CHARS:
        raise RequirementError(token, f"{quoted(text)} is not a version (digits and dots only)")
    if text.startswith("."):
        raise RequirementError(token, f"{quoted(text)} is not a version (it starts with a dot)")
    # Leading zeros do not count; over 20 digits is past 2**64 (and int() refuses 4300).
    if any(len(part.lstrip("0")) > 20 for part in text.split(".")):
        raise RequirementError(token, f"{quoted(text)} has a component too large to compare")
    parts = [int(part) for part in text.split(".") if part]
    if any(part >= _MAX_COMPONENT for part in parts):
        raise RequirementError(token, f"{quoted(text)} has a component too large to compare")
    return parts


def compare_versions(host: str, required: str, token: str = "") -> int:
    """-1, 0 or 1 as ``host`` is below, equal to or above ``required``; missing trailing
    components count as zero, so 12.8 == 12.8.0 but 12.8 < 12.8.1."""
    left = _version_components(host, token or required)
    right = _version_components(required, token or required)
    width = max(len(left), len(right))
    left += [0] * (width - len(left))
    right += [0] * (width - len(right))
    return (left > right) - (left < right)


def _holds(order: int, operator: str) -> bool:
    return {
        "=": order == 0,
        "!=": order != 0,
        "<": order < 0,
        "<=": order <= 0,
        ">": order > 0,
        ">=": order >= 0,
    }[operator]


def evaluate_condition(condition: Condition, host: HostValues, device: Optional[Device]) -> bool:
    if condition.rule in ("cuda", "driver"):
        actual = host.cuda if condition.rule == "cuda" else host.driver
    elif device is None:
        return True  # global evaluation: no GPU, so arch and brand are not compared at all
    else:
        actual = device.arch if condition.rule == "arch" else device.brand
    if actual is None or actual == "":
        return True  # the host cannot provide the value: counts as satisfied, nothing is checked
    if condition.rule == "brand":
        if condition.operator not in ("=", "!="):
            raise RequirementError(condition.text, "brand takes only = or !=")
        equal = actual.lower() == condition.value.lower()
        result = equal if condition.operator == "=" else not equal
    else:
        result = _holds(compare_versions(actual, condition.value, condition.text), condition.operator)
    if not result and len(f"{condition.rule} {condition.operator} {condition.value}") >= _MESSAGE_BUFFER:
        raise RequirementError(condition.text, f"longer than nvidia-container-cli's {_MESSAGE_BUFFER}-byte message buffer")
    return result


def evaluate_requirement(requirement: str, host: HostValues, device: Optional[Device] = None) -> Outcome:
    """Evaluate one string in one context (one GPU, or none), short-circuiting like the C loop."""
    result = True
    failed: Optional[str] = None
    try:
        for alternative in requirement.split(" "):
            if not alternative:
                continue
            completed = True
            for text in alternative.split(","):
                if not text:
                    continue
                result = evaluate_condition(parse_condition(text), host, device)
                if not result:
                    failed, completed = text, False
                    break
            if completed:
                # An alternative that ran to its end stops the loop with the last result, which
                # is the previous alternative's false when it held no condition at all (",").
                break
    except RequirementError as exc:
        return Outcome(requirement, False, True, failed, exc.token, exc.reason, device)
    return Outcome(requirement, result, False, None if result else failed, device=device)


def evaluate_requirements(requirements: Iterable[str], host: HostValues) -> list[Outcome]:
    """Every string once per visible GPU (once globally with none); for each string, the first
    failing context, else its satisfied outcome. The CLI stops at the first failure of all."""
    contexts: tuple[Optional[Device], ...] = host.devices or (None,)
    outcomes = []
    for requirement in requirements:
        outcome = None
        for device in contexts:
            outcome = evaluate_requirement(requirement, host, device)
            if not outcome.satisfied:
                break
        assert outcome is not None
        outcomes.append(outcome)
    return outcomes


def validate_requirement(requirement: str) -> None:
    """Strict check for strings a user types (``--require``): every condition must be one the
    C code would accept when it reaches it, with values it can compare. Raises RequirementError."""
    for alternative in requirement.split(" "):
        for text in alternative.split(","):
            if not text:
                continue
            condition = parse_condition(text)
            if condition.rule == "brand":
                if condition.operator not in ("=", "!="):
                    raise RequirementError(text, "brand takes only = or !=")
            else:
                _version_components(condition.value, text)
                if len(f"{condition.rule} {condition.operator} {condition.value}") >= _MESSAGE_BUFFER:
                    raise RequirementError(text, "value too long")


# --- the image's environment ------------------------------------------------------------------


def parse_go_bool(text: Optional[str]) -> bool:
    """Go's strconv.ParseBool, with parse errors read as false (how the toolkit reads it)."""
    return text in ("1", "t", "T", "TRUE", "true", "True")


@record
class ImageRequirements:
    """The requirements the toolkit would pass to nvidia-container-cli for an image's env."""

    requirements: tuple[tuple[str, str], ...] = ()  # (variable name, value), or ("legacy CUDA_VERSION", ...)
    disabled: bool = False  # NVIDIA_DISABLE_REQUIRE is true
    legacy: bool = False  # CUDA_VERSION set, NVIDIA_REQUIRE_CUDA empty or unset
    legacy_error: Optional[str] = None  # CUDA_VERSION the toolkit could not parse
    ignored: tuple[str, ...] = ()  # NVIDIA_REQUIRE_JETPACK* variables

    @property
    def strings(self) -> tuple[str, ...]:
        return tuple(value for _, value in self.requirements)


def _legacy_requirement(cuda_version: str) -> Optional[str]:
    """``cuda>=MAJOR.MINOR`` from CUDA_VERSION, read leniently like the toolkit's semver parser."""
    text = cuda_version.strip()
    if text[:1] in ("v", "V"):
        text = text[1:]
    head = text.split("-", 1)[0].split("+", 1)[0]
    parts = head.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and p.isascii() for p in parts):
        return None
    if any(len(p.lstrip("0")) > 20 for p in parts):  # overflows the toolkit's integers
        return None
    major = int(parts[0])
    minor = int(parts[1]) if len(parts) > 1 else 0
    return f"cuda>={major}.{minor}"


def image_requirements(env: Mapping[str, str]) -> ImageRequirements:
    """Which requirement strings an image's environment carries, as the toolkit collects them."""
    cuda_version = env.get("CUDA_VERSION", "")
    legacy = bool(cuda_version) and not env.get("NVIDIA_REQUIRE_CUDA")
    if parse_go_bool(env.get("NVIDIA_DISABLE_REQUIRE")):
        return ImageRequirements(disabled=True, legacy=legacy)
    collected = []
    ignored = []
    # The toolkit walks a Go map (random order); a stable order (CUDA first) keeps reports stable.
    for name in sorted(env, key=lambda n: (n != "NVIDIA_REQUIRE_CUDA", n)):
        if not name.startswith(REQUIRE_PREFIX):
            continue
        if name.startswith(JETPACK_PREFIX):
            ignored.append(name)
            continue
        collected.append((name, env[name]))
    legacy_error = None
    if legacy:
        requirement = _legacy_requirement(cuda_version)
        if requirement is None:
            legacy_error = cuda_version
        else:
            collected.append(("CUDA_VERSION (legacy image)", requirement))
    return ImageRequirements(tuple(collected), False, legacy, legacy_error, tuple(ignored))


def env_mapping(entries: Iterable[str]) -> dict[str, str]:
    """``KEY=VALUE`` entries as a mapping; later duplicates win, entries without ``=`` are dropped."""
    env: dict[str, str] = {}
    for entry in entries:
        if "=" in entry:
            key, value = entry.split("=", 1)
            env[key] = value
    return env


@record
class VisibleDevices:
    """What NVIDIA_VISIBLE_DEVICES in an image means when it runs without ``--gpus``."""

    value: Optional[str]
    gpu_container: bool  # the toolkit injects the driver (and evaluates requirements)
    devices: str  # "none" | "all" | "some"
    meaning: str


def visible_devices_meaning(env: Mapping[str, str], legacy: bool) -> VisibleDevices:
    raw = env.get("NVIDIA_VISIBLE_DEVICES")
    if raw is None and legacy:
        raw_effective: Optional[str] = "all"
    else:
        raw_effective = raw
    if raw_effective is None:
        return VisibleDevices(raw, False, "none", "unset: not a GPU container; no driver, no GPU, no requirement check")
    entries = [part.strip() for part in raw_effective.split(",") if part.strip()]
    if raw_effective == "" or not entries:
        return VisibleDevices(raw, False, "none", "empty: same as void; not a GPU container, no requirement check")
    if "all" in entries:
        suffix = " (a legacy CUDA image with it unset gets all)" if raw is None else ""
        return VisibleDevices(raw, True, "all", f"all GPUs; requirements checked for each GPU{suffix}")
    if "none" in entries:
        return VisibleDevices(raw, True, "none", "none: driver libraries but no GPU; requirements still checked (cuda and driver only)")
    if "void" in entries:
        return VisibleDevices(raw, False, "none", "void: not a GPU container; no driver, no GPU, no requirement check")
    return VisibleDevices(raw, True, "some", f"the GPUs {', '.join(entries)}; requirements checked for each")
