"""A Kubernetes ``nodeAffinity`` over GFD labels that selects the nodes able to run the fleet's
target. Pure: the fleet result and the table in, a JSON-shaped dict (or its YAML text) out.

What Kubernetes can express (NodeSelectorRequirement): ``In``, ``NotIn``, ``Exists``,
``DoesNotExist``, and ``Gt``/``Lt`` against one integer (the label's value is parsed as an
integer; a value that is not one never matches). Expressions in one term are ANDed, terms are
ORed. So "driver >= 550.54.15" becomes three terms over GFD's ``nvidia.com/cuda.driver.major``,
``.minor`` and ``.rev`` (written by every GFD release, beside the newer ``driver-version.*``):
major > 550; major = 550 and minor > 54; major = 550, minor = 54 and rev > 14. Each term also
names the compute capabilities the build runs on (``gpu.compute.major`` In, ``gpu.compute.minor``
In, one term per major so no pair is selected that the build lacks), with that capability's own
driver floor: a GPU the wheels carry only PTX for needs the driver's full support of the CUDA
release (a driver under minor-version compatibility cannot JIT-compile it).

PyTorch's Linux aarch64 wheels carry code for other GPUs than the x86_64 ones, so every term also
names the node architectures (``kubernetes.io/arch`` In, the kubelet's label) whose build runs
those GPUs at that floor: an arm64 node is selected only for the GPUs its build carries code for,
and only when the variant is published for it.

Nodes of the fleet the labels would select but the check fails for other reasons (a MIG layout,
no GPU counted) are excluded by name (``kubernetes.io/hostname`` NotIn), so the affinity selects
exactly the nodes of this fleet that can run the target, and new nodes by their labels.
"""

from __future__ import annotations

from typing import Any, Optional

from ..compat.table import CompatTable, WheelVariant
from ..model.findings import FAIL
from ..model.versions import DriverVersion
from .gfd import ARCH, CC_MAJOR, CC_MINOR, DRIVER_MAJOR, DRIVER_MINOR, DRIVER_REV, GOARCH_OF_MACHINE
from .judge import FleetResult
from .sources import NODE_LABELS

HOSTNAME = "kubernetes.io/hostname"
# The kubelet's architecture names (Go's GOARCH) of the Linux platforms the table records builds for.
PLATFORM_OF_GOARCH = {"amd64": "linux-x86_64", "arm64": "linux-aarch64"}

Floors = dict[tuple[int, int], DriverVersion]


class AffinityError(ValueError):
    """No nodeAffinity can be written for this target (the message says why)."""


def _variant(fleet: FleetResult, table: CompatTable) -> WheelVariant:
    answer = fleet.answer
    if answer is None or answer.variant is None:
        raise AffinityError("no host with GPU facts to write a nodeAffinity for")
    torch = answer.torch
    if torch is None:  # a fixed target (--variant, --image): the release its groups were judged for
        judged = (g.result.target.torch for g in fleet.groups if g.result is not None and g.result.target is not None)
        torch = next(judged, fleet.request.release.version)
    release = table.release(torch)
    variant = release.variant(answer.variant) if release is not None else None
    if variant is None:
        raise AffinityError(f"the table does not record PyTorch {torch} {answer.variant}, so its GPUs and driver floor are unknown")
    return variant


def _floors(table: CompatTable, variant: WheelVariant) -> dict[tuple[int, int], DriverVersion]:
    """Each compute capability the build runs on, with the oldest driver it runs under there."""
    full_row = table.min_driver_full(variant.cuda)
    compat_row = table.minor_compat_floor(variant.cuda.major)
    full = full_row.min_driver_linux if full_row else None
    compat = compat_row.min_driver_linux if compat_row else None
    toolkit = table.toolkit_architectures_for(variant.cuda)
    floors: dict[tuple[int, int], DriverVersion] = {}
    for info in table.compute_capabilities:
        cc = info.cc
        if toolkit is not None and not toolkit.supports(cc):
            continue
        coverage = variant.coverage(cc)
        floor = (compat or full) if coverage == "sass" else full if coverage == "ptx" else None
        if floor is not None:
            floors[(cc.major, cc.minor)] = floor
    return floors


def _expr(key: str, operator: str, values: list[str]) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": values}


def _driver_terms(floor: DriverVersion) -> list[list[dict[str, Any]]]:
    """driver >= floor as ORed lists of requirements on GFD's driver major/minor/rev labels."""
    numbers = list(floor.numbers) + [0] * (3 - len(floor.numbers))
    major, minor, rev = numbers[:3]
    terms = [[_expr(DRIVER_MAJOR, "Gt", [str(major)])]]
    terms.append([_expr(DRIVER_MAJOR, "In", [str(major)]), _expr(DRIVER_MINOR, "Gt", [str(minor)])])
    minors = sorted({str(minor), f"{minor:02d}"})  # GFD writes the minor as the driver spells it
    if rev == 0:
        terms.append([_expr(DRIVER_MAJOR, "In", [str(major)]), _expr(DRIVER_MINOR, "In", minors)])
    else:
        terms.append([
            _expr(DRIVER_MAJOR, "In", [str(major)]),
            _expr(DRIVER_MINOR, "In", minors),
            _expr(DRIVER_REV, "Gt", [str(rev - 1)]),
        ])
    return terms


def _platform_floors(table: CompatTable, variant: WheelVariant) -> dict[str, Floors]:
    """For each node architecture the variant is published for, the floors of its build there."""
    return {
        goarch: _floors(table, built)
        for goarch, platform in PLATFORM_OF_GOARCH.items()
        if (built := variant.on_record_for(platform)) is not None  # no Arm build on record: no Arm term
    }


def _excluded(fleet: FleetResult, by_arch: dict[str, Floors]) -> list[str]:
    """Label-read nodes the terms would select although the check fails on them."""
    names: list[str] = []
    for group in fleet.groups:
        if group.facts is None or group.result is None or group.result.verdict != FAIL:
            continue
        if not all(h.origin == NODE_LABELS for h in group.hosts):
            continue
        machine = group.facts.system.machine if group.facts.system is not None else None
        floors = by_arch.get(GOARCH_OF_MACHINE.get(machine or "", machine or ""))
        if floors is None:  # no architecture known, or none the terms name: not selected
            continue
        driver = DriverVersion.parse(group.driver) if group.driver else None
        ccs = {g.compute_capability for g in group.facts.gpus}
        if driver is None or len(ccs) != 1 or None in ccs:
            continue
        major, minor = (int(p) for p in str(next(iter(ccs))).split("."))
        floor = floors.get((major, minor))
        if floor is not None and driver >= floor:
            names.extend(group.names)
    return sorted(set(names))


def node_affinity(fleet: FleetResult, table: CompatTable) -> dict[str, Any]:
    """``{"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [...]}}}``."""
    if not fleet.request.family.offers_wheels:
        # An NGC month's driver floor depends on each node's GPU class (forward compatibility), which GFD labels do not settle.
        raise AffinityError(
            f"--format node-affinity is for the wheel families; for {fleet.request.family.name} use --format report (or --json)"
        )
    variant = _variant(fleet, table)
    by_arch = _platform_floors(table, variant)
    if not any(by_arch.values()):
        raise AffinityError(f"{variant.name} carries code for no GPU the table knows")
    # (architectures, floor, compute major) -> the minors: architectures whose builds agree share terms.
    by_floor_major: dict[tuple[tuple[str, ...], DriverVersion, int], list[int]] = {}
    for major, minor, floor in sorted({(mj, mn, f) for floors in by_arch.values() for (mj, mn), f in floors.items()}):
        arches = tuple(goarch for goarch, floors in sorted(by_arch.items()) if floors.get((major, minor)) == floor)
        by_floor_major.setdefault((arches, floor, major), []).append(minor)
    excluded = _excluded(fleet, by_arch)
    terms = []
    for (arches, floor, major), minors in sorted(by_floor_major.items(), key=lambda item: (item[0][2], item[0][1], item[0][0])):
        gpu = [
            _expr(ARCH, "In", list(arches)),
            _expr(CC_MAJOR, "In", [str(major)]),
            _expr(CC_MINOR, "In", [str(m) for m in minors]),
        ]
        for driver in _driver_terms(floor):
            term = gpu + driver
            if excluded:
                term = term + [_expr(HOSTNAME, "NotIn", excluded)]
            terms.append({"matchExpressions": term})
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def _quote(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is valid YAML)."""
    import json

    return json.dumps(text)


def affinity_yaml(affinity: dict[str, Any], comment: Optional[str] = None) -> str:
    """The affinity as YAML for a pod spec's ``affinity:`` (written by hand: no YAML library needed)."""
    lines = [f"# {comment}"] if comment else []
    lines += ["affinity:", "  nodeAffinity:", "    requiredDuringSchedulingIgnoredDuringExecution:", "      nodeSelectorTerms:"]
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    for term in terms:
        lines.append("      - matchExpressions:")
        for expr in term["matchExpressions"]:
            lines.append(f"        - key: {_quote(expr['key'])}")
            lines.append(f"          operator: {expr['operator']}")
            lines.append("          values: [" + ", ".join(_quote(v) for v in expr["values"]) + "]")
    return "\n".join(lines) + "\n"
