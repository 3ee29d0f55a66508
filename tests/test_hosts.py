"""The pure core judged on snapshots of realistic machines (tests/hosts/*.json).

Each case pins a PyTorch release so that newer releases in the table do not move it. The
expected verdicts follow from NVIDIA's Table 3 / minor-version-compatibility floors and from
the arch lists PyTorch's Linux wheels were built with (see docs/table.md for the sources).
"""

from __future__ import annotations

import pytest

from helpers import host, invoke

# (snapshot, torch, expected variant or None, verdict, exit status, codes that must appear)
CASES = [
    # 470 supports CUDA 11.4: every 12.x build is below its 525.60.13 floor.
    ("t4-470", "2.8", None, "fail", 1, {"driver-too-old", "gpu-arch-ok"}),
    # ...but cu118 runs under 11.x minor-version compatibility (>= 450.80.02).
    ("t4-470", "2.5", "cu118", "warn", 0, {"driver-minor-compat", "gpu-arch-ok"}),
    # 525.60.13 fully supports CUDA 11.8 (520.61.05) but 12.1/12.4 only by minor-version compat:
    # the fully supported tier wins over a newer CUDA.
    ("a100-525", "2.5", "cu118", "ok", 0, {"driver-ok", "gpu-arch-ok"}),
    ("h100-535", "2.5", "cu121", "ok", 0, {"driver-ok"}),
    ("h100-535", "2.8", "cu129", "warn", 0, {"driver-minor-compat"}),
    ("h100-550", "2.5", "cu124", "ok", 0, {"driver-ok", "gpu-arch-ok"}),
    # sm_89 runs the sm_86 machine code (same major, higher minor).
    ("rtx4090-550", "2.5", "cu124", "ok", 0, {"gpu-arch-ok"}),
    # Blackwell (sm_120) needs CUDA 12.8; 570.86.16 supports it fully.
    ("rtx5090-570", "2.8", "cu128", "ok", 0, {"driver-ok", "gpu-arch-ok"}),
    ("rtx5090-570", "2.5", None, "fail", 1, {"gpu-arch-not-built"}),
    # Pascal (sm_61) is absent from cu128/cu129 builds; cu126 still carries sm_60.
    ("gtx1080ti-580", "2.8", "cu126", "ok", 0, {"driver-ok", "gpu-arch-ok"}),
    # Kepler (sm_37) was last built in cu118; CUDA 12 toolkits cannot target it.
    ("k80-470", "2.8", None, "fail", 1, {"gpu-arch-not-built"}),
    ("k80-470", "2.5", "cu118", "warn", 0, {"driver-minor-compat", "gpu-arch-ok"}),
    ("v100-h100-550", "2.8", "cu129", "warn", 0, {"driver-minor-compat", "gpu-arch-ok"}),
    ("no-gpu-550", "2.8", None, "fail", 1, {"no-gpu", "nvml-ok"}),
    # No driver (or one NVML cannot read), no GPU, no what-if: no CUDA build can be named.
    ("no-driver", "2.8", None, "fail", 1, {"nvml-library-missing"}),
    ("driver-mismatch", "2.8", None, "fail", 1, {"nvml-driver-mismatch"}),
]


@pytest.mark.parametrize("name,torch,variant,verdict,status,codes", CASES, ids=[f"{c[0]}@{c[1]}" for c in CASES])
def test_check_snapshot(name, torch, variant, verdict, status, codes):
    run = invoke("check", "--snapshot", host(name), "--torch", torch, "--json")
    data = run.json()
    assert run.exit_code == status
    assert data["verdict"] == verdict
    assert codes <= set(run.codes())
    if variant is None:
        assert data["recommendation"] is None
        assert data["no_recommendation"]["why"]
    else:
        assert data["recommendation"]["variant"] == variant
        # The default family is PyTorch's own images: {full version}-cuda{X.Y}-cudnn9-runtime.
        full = {"2.5": "2.5.1", "2.8": "2.8.0"}[torch]
        cuda = f"{variant[2:-1]}.{variant[-1]}"
        assert data["recommendation"]["image"] == f"pytorch/pytorch:{full}-cuda{cuda}-cudnn9-runtime"
    # Every finding carries the contract's keys, and nothing fails without a hint.
    for finding in data["findings"]:
        assert set(finding) >= {"code", "severity", "title", "detail", "hint", "source"}
        if finding["severity"] == "fail":
            assert finding["hint"]


def test_driver_too_old_hint_names_smallest_working_driver():
    data = invoke("check", "--snapshot", host("t4-470"), "--torch", "2.8", "--json").json()
    too_old = next(f for f in data["findings"] if f["code"] == "driver-too-old")
    # Any CUDA 12.x build runs from 525.60.13 on (minor-version compatibility); 12.8 fully from 570.26.
    assert ">= 525.60.13" in too_old["hint"]
    assert "570.26" in too_old["hint"]


def test_minor_compat_detail_says_what_is_given_up():
    data = invoke("check", "--snapshot", host("h100-535"), "--torch", "2.8", "--json").json()
    warn = next(f for f in data["findings"] if f["code"] == "driver-minor-compat")
    assert "PTX" in warn["detail"] and "cudaErrorCallRequiresNewerDriver" in warn["detail"]


def test_strict_turns_warnings_into_exit_1():
    assert invoke("check", "--snapshot", host("t4-470"), "--torch", "2.5", "--json").exit_code == 0
    assert invoke("check", "--snapshot", host("t4-470"), "--torch", "2.5", "--json", "--strict").exit_code == 1


def test_pinned_variant_without_the_gpus_arch_fails():
    run = invoke("check", "--snapshot", host("gtx1080ti-580"), "--torch", "2.8", "--variant", "cu128", "--json")
    data = run.json()
    assert run.exit_code == 1
    assert data["target"]["variant"] == "cu128" and data["target"]["origin"] == "--variant"
    finding = next(f for f in data["findings"] if f["code"] == "gpu-arch-not-built")
    assert "sm_61" in finding["title"]
    assert "cu126" in finding["hint"]  # the variant of the same release that does carry sm_61


def test_mixed_host_hint_excludes_only_the_blocking_gpu():
    run = invoke("check", "--snapshot", host("v100-h100-550"), "--torch", "2.9", "--variant", "cu130", "--json")
    findings = run.json()["findings"]
    not_built = [f for f in findings if f["code"] == "gpu-arch-not-built"]
    assert [f["gpu_index"] for f in not_built] == [0]  # the V100 (sm_70); CUDA 13 starts at sm_75
    assert "CUDA_VISIBLE_DEVICES=1" in not_built[0]["hint"]
    assert any(f["code"] == "gpu-arch-ok" and f["gpu_index"] == 1 for f in findings)


def test_recommendation_explains_the_losers():
    data = invoke("check", "--snapshot", host("rtx5090-570"), "--torch", "2.8", "--json").json()
    rejected = {r["variant"]: r["reason"] for r in data["recommendation"]["rejected"]}
    assert "sm_120" in rejected["cu126"]
    assert "minor-version compatibility" in rejected["cu129"]


def test_no_recommendation_suggests_older_release_for_kepler():
    data = invoke("check", "--snapshot", host("k80-470"), "--torch", "2.8", "--json").json()
    fixes = " ".join(data["no_recommendation"]["fixes"])
    assert "PyTorch 2.5" in fixes  # the newest official build with sm_37 (2.6/2.7 cu118's sm_37 is third-party only)
    use = [a for a in data["no_recommendation"]["actions"] if a["action"] == "use-release"]
    assert [(a["torch"], a["variant"]) for a in use] == [("2.5", "cu118")]
