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
    run = invoke("recommend", "--format", "json", "--torch", "2.7", "--snapshot", snapshot)
    assert run.exit_code == 1
    rejected = {r["variant"]: r["reason"] for r in run.json()["no_recommendation"]["rejected"]}
    assert rejected and all("no Linux aarch64 build of it is on record" in reason for reason in rejected.values())
    x86 = invoke("recommend", "--format", "tag", "--torch", "2.7", "--snapshot", str(HOSTS / "t4-470.json"))
    assert x86.exit_code == 0 and x86.stdout.strip().endswith("cu118")


def test_an_h100_on_arm_is_offered_the_arm_build(tmp_path: Path) -> None:
    snapshot = arm_snapshot(tmp_path, "h100-550")
    rec = invoke("recommend", "--format", "json", "--torch", "2.14", "--snapshot", snapshot).json()["recommendation"]
    assert rec is not None and rec["platform"] == "linux-aarch64" and rec["variant"] == "cu126"
