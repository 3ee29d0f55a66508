"""Linux aarch64 hosts: an arch list read off the x86_64 wheels says nothing about the Arm ones
(from 2.12 on they carry other code: sm_80, sm_90, sm_100, sm_110, sm_120, no Turing), so a
variant is offered on Arm only where the table records an Arm build of it, and the GPU check
judges the Arm build's own list."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import HOSTS, invoke


def arm_snapshot(tmp_path: Path, name: str) -> str:
    """A snapshot from tests/hosts, as the same host would report it on an Arm machine."""
    data = json.loads((HOSTS / f"{name}.json").read_text())
    source = json.loads((HOSTS / "h100-550.json").read_text())["host"]["system"]
    system = dict(data["host"].get("system") or source or {})
    system.update({"os": "linux", "machine": "aarch64"})
    data["host"]["system"] = system
    path = tmp_path / f"{name}-arm.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_t4_on_arm_gets_no_build_that_lacks_turing_code(tmp_path: Path) -> None:
    snapshot = arm_snapshot(tmp_path, "t4-470")
    data = invoke("check", "--json", "--torch", "2.14", "--driver", "580.65.06", "--snapshot", snapshot).json()
    arch = [f for f in data["findings"] if f["code"] == "gpu-arch-not-built"]
    assert arch and arch[0]["severity"] == "fail"  # the Arm cu130 build carries no sm_75
    x86 = invoke("check", "--json", "--torch", "2.14", "--driver", "580.65.06", "--snapshot", str(HOSTS / "t4-470.json")).json()
    assert not [f for f in x86["findings"] if f["code"] == "gpu-arch-not-built"]


def test_variants_with_only_an_x86_64_arch_list_are_not_offered_on_arm(tmp_path: Path) -> None:
    snapshot = arm_snapshot(tmp_path, "t4-470")
    run = invoke("recommend", "--wheel", "--format", "json", "--torch", "2.7", "--snapshot", snapshot)
    assert run.exit_code == 1
    rejected = {r["variant"]: r["reason"] for r in run.json()["no_recommendation"]["rejected"]}
    assert rejected and all("no Linux aarch64 build of it is on record" in reason for reason in rejected.values())
    x86 = invoke("recommend", "--wheel", "--format", "index-url", "--torch", "2.7", "--snapshot", str(HOSTS / "t4-470.json"))
    assert x86.exit_code == 0 and x86.stdout.strip().endswith("cu118")


def test_an_h100_on_arm_is_offered_the_arm_build(tmp_path: Path) -> None:
    snapshot = arm_snapshot(tmp_path, "h100-550")
    rec = invoke("recommend", "--wheel", "--format", "json", "--torch", "2.14", "--snapshot", snapshot).json()["recommendation"]
    assert rec is not None and rec["platform"] == "linux-aarch64" and rec["variant"] == "cu126"


def test_a_pinned_variant_without_an_arm_build_is_not_judged_as_if_x86(tmp_path: Path) -> None:
    """--variant cu126 of 2.11 on Arm: only its x86_64 arch list is on record, so the GPU check
    gives no verdict (gpu-arch-unrecorded) rather than gpu-arch-ok from the x86_64 list."""
    snapshot = arm_snapshot(tmp_path, "rtx4090-550")
    data = invoke("check", "--json", "--torch", "2.11", "--variant", "cu126", "--snapshot", snapshot).json()
    codes = {f["code"]: f["severity"] for f in data["findings"]}
    assert codes.get("gpu-arch-unrecorded") == "warn" and "gpu-arch-ok" not in codes
    x86 = invoke("check", "--json", "--torch", "2.11", "--variant", "cu126", "--snapshot", str(HOSTS / "rtx4090-550.json")).json()
    assert "gpu-arch-ok" in {f["code"] for f in x86["findings"]}


def test_a_variant_listed_for_linux_without_an_arm_build_is_not_offered_on_arm(tmp_path: Path) -> None:
    """2.11 cu129 is listed for Linux but the table holds no Arm build of it: a T4 on Arm is not
    told to use it (the x86_64 list has sm_75; what the Arm wheels carry is not on record)."""
    snapshot = arm_snapshot(tmp_path, "t4-470")
    run = invoke("recommend", "--format", "json", "--torch", "2.11", "--driver", "580.95.05", "--snapshot", snapshot)
    rec = run.json()["recommendation"]
    assert rec is None or rec["variant"] != "cu129"
