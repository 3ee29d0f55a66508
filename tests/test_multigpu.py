"""Multi-GPU readiness: the pair facts through the real nvidia-ml-py against the stand-in NVML
(an HGX board, a 2-socket PCIe server, NVLink bridge pairs, MIG, calls failing or missing), the
system facts below a fixture root, and the multi-gpu checks and launch lint they feed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest
from helpers import host, run_cli
from nvml_stub import gpu_config, hgx_config, nvlink_bridge_pairs_config, two_socket_pcie_config
from sysroot import make_sysroot

from cudadoctor.model.topology import TIER_HOST, TIER_NVLINK, TIER_PCIE, index_ranges, islands, said_together

PCIE_DRIVER = "550.54.15"
HGX_DRIVER = "595.45.04"
NO_DOCKER = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
PYTORCH_IMAGE = "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"


def system_root(
    tmp_path: Path,
    module: str,
    *,
    shm: Optional[str] = "67108864k",
    memlock: str = "unlimited",
    iommu: Optional[str] = None,
    infiniband: tuple[str, ...] = (),
    peermem: bool = False,
) -> Path:
    """A fixture root: the kernel module matching the stand-in's driver, /dev/shm's mount line,
    this process's limits, the GPU's IOMMU group type, InfiniBand devices and nvidia_peermem."""
    root = make_sysroot(tmp_path / "root", module=module, nodes=("nvidiactl", "nvidia-uvm", *(f"nvidia{i}" for i in range(8))))
    (root / "proc/self").mkdir(parents=True, exist_ok=True)
    mounts = "overlay / overlay rw,relatime 0 0\n"
    if shm is not None:
        mounts += f"shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size={shm} 0 0\n"
    (root / "proc/self/mounts").write_text(mounts)
    limit = f"{memlock:<21}{memlock:<21}bytes"
    (root / "proc/self/limits").write_text(
        "Limit                     Soft Limit           Hard Limit           Units\n"
        f"Max locked memory         {limit}\n"
    )
    (root / "sys/class/iommu").mkdir(parents=True, exist_ok=True)
    if iommu is not None:
        group = root / "sys/bus/pci/devices/0000:07:00.0/iommu_group"
        group.mkdir(parents=True, exist_ok=True)
        (group / "type").write_text(iommu + "\n")
        (root / "sys/class/iommu/dmar0").mkdir(parents=True, exist_ok=True)
    for name in infiniband:
        port = root / "sys/class/infiniband" / name / "ports/1"
        port.mkdir(parents=True, exist_ok=True)
        (port / "link_layer").write_text("InfiniBand\n")
    if peermem:
        (root / "sys/module/nvidia_peermem").mkdir(parents=True, exist_ok=True)
    return root


def check(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    run = run_cli("check", "--json", *args, env={**NO_DOCKER, **env})
    assert run.stderr == "", run.stderr
    return run.exit_code, run.json()


def findings(payload: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in payload["findings"] if f["code"] == code]


def one(payload: dict[str, Any], code: str) -> dict[str, Any]:
    found = findings(payload, code)
    assert len(found) == 1, [f["code"] for f in payload["findings"]]
    return found[0]


@pytest.fixture
def hgx(fake_nvml_env, tmp_path):
    def make(fabric: int, status: int = 0, **extra: object) -> dict[str, str]:
        root = system_root(tmp_path, HGX_DRIVER)
        return {**fake_nvml_env({**hgx_config(fabric, status), **extra}), "CUDADOCTOR_SYSROOT": str(root)}

    return make


@pytest.fixture
def pcie(fake_nvml_env, tmp_path):
    def make(**extra: object) -> dict[str, str]:
        root = system_root(tmp_path, PCIE_DRIVER)
        return {**fake_nvml_env({**two_socket_pcie_config(), **extra}), "CUDADOCTOR_SYSROOT": str(root)}

    return make


# ---- the done-when examples -------------------------------------------------------------------


def test_an_hgx_board_with_the_fabric_not_started_fails_and_says_how_to_start_the_fabric_manager(hgx):
    env = hgx(fabric=1)
    code, payload = check(env)
    assert code == 1
    fabric = one(payload, "fabric-not-ready")
    assert fabric["severity"] == "fail" and fabric["group"] == "multi-gpu"
    assert "not started for GPUs 0-7" in fabric["title"] and "system not yet initialized" in fabric["title"]
    assert "sudo systemctl enable --now nvidia-fabricmanager" in fabric["hint"]
    assert "nvidia-fabricmanager-595" in fabric["hint"]  # the package of the driver's branch
    path = one(payload, "multi-gpu-path")  # the pairs have no NVLink, but the cause is the fabric
    assert path["title"].startswith("8 GPUs on an NVSwitch fabric that is not ready")
    assert "sudo systemctl enable --now nvidia-fabricmanager" in path["hint"]  # the fix itself, not a pointer
    text = run_cli("check", env={**NO_DOCKER, **env})
    assert text.exit_code == 1
    assert "fabric-not-ready" in text.stdout and "sudo systemctl enable --now nvidia-fabricmanager" in text.stdout


def test_a_fabric_in_progress_fails_too_and_says_to_wait(hgx):
    _, payload = check(hgx(fabric=2))
    fabric = one(payload, "fabric-not-ready")
    assert "still being set up" in fabric["title"] and "journalctl -u nvidia-fabricmanager" in fabric["hint"]


def test_once_the_fabric_completed_all_pairs_are_over_nvlink(hgx):
    _, payload = check(hgx(fabric=3))
    assert not findings(payload, "fabric-not-ready")
    assert one(payload, "fabric-ok")["severity"] == "ok"
    path = one(payload, "multi-gpu-path")
    assert (path["severity"], path["title"]) == ("ok", "8 GPUs, all pairs over NVLink: ready")
    assert payload["answer"]["multi_gpu"]["text"] == "8 GPUs, all pairs over NVLink: ready"  # the answer says the path
    text = run_cli("check", env={**NO_DOCKER, **hgx(fabric=3)}).stdout
    assert "Multi-GPU: 8 GPUs, all pairs over NVLink: ready" in text.split("\n\n")[0]  # in the answer, before the details
    assert not findings(payload, "p2p-unavailable")
    gpu0 = payload["host"]["gpus"][0]  # the pair matrix is in the host facts
    assert [p["index"] for p in gpu0["peers"]] == [1, 2, 3, 4, 5, 6, 7]
    assert {p["p2p_nvlink"] for p in gpu0["peers"]} == {"ok"}
    assert gpu0["peers"][3]["link"] == "cross-socket"
    assert (gpu0["nvlink_links"], gpu0["nvlink_active"]) == (18, 18)
    assert gpu0["fabric"]["state"] == "completed" and gpu0["fabric"]["status"] == 0


def test_a_gpu_that_failed_to_register_with_the_fabric_fails(hgx):
    _, payload = check(hgx(fabric=3, **{"gpu5.fabric.status": 999}))
    failed = one(payload, "fabric-registration-failed")
    assert failed["severity"] == "fail" and "GPU 5" in failed["title"] and "999" in failed["title"]


def test_a_two_socket_host_without_p2p_across_sockets_names_the_halves_and_how_to_pin_a_job(pcie):
    code, payload = check(pcie())
    path = one(payload, "multi-gpu-path")
    assert path["severity"] == "warn" and payload["answer"]["multi_gpu"]["text"] == path["title"]
    assert path["title"] == (
        "GPUs 0-3 and 4-7 talk through the CPU: expect slow all-reduce; pin jobs to one half with CUDA_VISIBLE_DEVICES=0,1,2,3"
    )
    p2p = one(payload, "p2p-unavailable")
    assert "16 GPU pair(s)" in p2p["title"] and "topology-not-supported" in p2p["title"]
    assert "0-4" in p2p["detail"] and "0-1," not in p2p["detail"]
    assert not findings(payload, "multi-gpu-cross-socket")  # no P2P at all across them: p2p-unavailable says it


def test_the_launch_line_of_a_multi_gpu_job_gets_the_ipc_and_shared_memory_flags_to_add(pcie):
    _, payload = check(pcie(), "--run", f"docker run --gpus all {PYTORCH_IMAGE}")
    ipc = one(payload, "multi-gpu-run-ipc")
    assert ipc["severity"] == "warn" and ipc["group"] == "multi-gpu"
    assert "64 MiB /dev/shm" in ipc["title"] and "`--ipc=host` or `--shm-size=8g`" in ipc["title"]
    assert "--ipc=host --ulimit memlock=-1" in ipc["hint"] and "--shm-size=8g --ulimit memlock=-1" in ipc["hint"]
    for line in (f"docker run --gpus all --ipc=host {PYTORCH_IMAGE}", f"docker run --gpus all --shm-size=8g {PYTORCH_IMAGE}",
                 f"docker run --gpus all -v /dev/shm:/dev/shm {PYTORCH_IMAGE}"):  # fmt: skip
        _, fixed = check(pcie(), "--run", line)
        assert not findings(fixed, "multi-gpu-run-ipc"), line
    _, small = check(pcie(), "--run", f"docker run --gpus all --shm-size=2g {PYTORCH_IMAGE}")
    assert "a 2 GiB /dev/shm" in one(small, "multi-gpu-run-ipc")["title"]


# ---- paths ---------------------------------------------------------------------------------------


def test_nvlink_bridge_pairs_are_ready_with_pcie_between_the_pairs(fake_nvml_env, tmp_path):
    env = {**fake_nvml_env(nvlink_bridge_pairs_config()), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, PCIE_DRIVER))}
    _, payload = check(env)
    path = one(payload, "multi-gpu-path")
    assert (path["severity"], path["title"]) == ("ok", "4 GPUs, NVLink within 0-1 and 2-3, PCIe peer-to-peer between: ready")


def test_gpus_per_job_pins_a_job_to_gpus_of_one_half_or_says_none_holds_it(pcie):
    _, two = check(pcie(), "--gpus-per-job", "2")
    assert one(two, "multi-gpu-path")["title"].endswith("pin jobs to one half with CUDA_VISIBLE_DEVICES=0,1")
    _, eight = check(pcie(), "--gpus-per-job", "8")
    assert one(eight, "multi-gpu-path")["title"] == (
        "GPUs 0-3 and 4-7 talk through the CPU: expect slow all-reduce; no half holds a job of 8 GPUs"
    )
    code, sixteen = check(pcie(), "--gpus-per-job", "16")
    too_large = one(sixteen, "multi-gpu-job-too-large")
    assert code == 1 and too_large["severity"] == "fail" and "CUDA sees 8" in too_large["title"]


def test_cuda_visible_devices_limits_the_job_to_the_gpus_it_leaves(pcie):
    env = {**pcie(), "CUDA_VISIBLE_DEVICES": "4,5"}
    _, payload = check(env)
    path = one(payload, "multi-gpu-path")
    assert (path["severity"], path["title"]) == ("ok", "2 GPUs, all pairs over PCIe peer-to-peer: ready")


def test_p2p_off_everywhere_says_all_traffic_goes_through_the_cpu(pcie):
    _, payload = check(pcie(p2p=4))
    assert one(payload, "multi-gpu-path")["title"].startswith("No pair of the 8 GPUs has peer-to-peer")
    p2p = one(payload, "p2p-unavailable")
    assert "disabled-by-regkey" in p2p["title"] and "NVreg_RegistryDwords" in p2p["hint"]


def test_cross_socket_pairs_with_p2p_but_no_nvlink_warn(pcie):
    _, payload = check(pcie(**{"p2p.cross_socket": 0}))
    assert one(payload, "multi-gpu-path")["title"] == "8 GPUs, all pairs over PCIe peer-to-peer: ready"
    assert "0-3 and 4-7" in one(payload, "multi-gpu-cross-socket")["title"]


def test_one_gpu_gets_no_multi_gpu_verdict(fake_nvml_env, tmp_path):
    env = {**fake_nvml_env({"count": 1, **gpu_config(0)}), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, "535.104.05", shm="64m"))}
    _, payload = check(env)
    assert not [f for f in payload["findings"] if f["group"] == "multi-gpu"]
    assert payload["host"]["gpus"][0]["peers"] == []


# ---- the GPUs of one job -----------------------------------------------------------------------


def test_mixed_models_and_mig_and_a_link_down_are_named(pcie):
    extra = {**gpu_config(7, "NVIDIA A100-SXM4-80GB", mig=1, socket=1, **{"mig.count": 2}), "gpu1.nvlinks": 4, "gpu1.nvlinks_active": 3}
    _, payload = check(pcie(**extra))
    assert "NVIDIA A100-SXM4-80GB, NVIDIA L40S" in one(payload, "multi-gpu-mixed")["title"]
    mig = one(payload, "multi-gpu-mig")
    assert mig["severity"] == "warn" and "GPU 7" in mig["title"]
    down = one(payload, "nvlink-down")
    assert down["gpu_index"] == 1 and "1 of its 4 NVLink links are down" in down["title"]
    _, job = check(pcie(**extra), "--gpus-per-job", "4")
    assert one(job, "multi-gpu-mig")["severity"] == "fail"


# ---- NVML calls failing, missing, hanging, crashing ------------------------------------------------

NEW_CALLS = (
    "nvmlDeviceGetTopologyCommonAncestor",
    "nvmlDeviceGetP2PStatus",
    "nvmlDeviceGetNvLinkState",
    "nvmlDeviceGetGpuFabricInfo",
    "nvmlDeviceGetGpuFabricInfoV",
)


def test_a_driver_without_the_new_calls_leaves_the_facts_unknown(fake_nvml_env, tmp_path):
    env = {**fake_nvml_env(hgx_config(1), omit=NEW_CALLS), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, HGX_DRIVER))}
    _, payload = check(env)
    gpu = payload["host"]["gpus"][0]
    assert gpu["fabric"] is None and gpu["nvlink_links"] is None
    assert {(p["link"], p["p2p_read"], p["p2p_nvlink"]) for p in gpu["peers"]} == {(None, None, None)}
    path = one(payload, "multi-gpu-path")
    assert (path["severity"], path["title"]) == ("info", "8 GPUs: how they reach each other is not known")
    assert not findings(payload, "fabric-not-ready") and payload["host"]["driver"]["nvml_state"] == "ok"


def test_the_older_fabric_call_answers_where_the_versioned_one_is_missing(fake_nvml_env, tmp_path):
    env = {**fake_nvml_env(hgx_config(1), omit=("nvmlDeviceGetGpuFabricInfoV",)), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, HGX_DRIVER))}
    _, payload = check(env)
    assert payload["host"]["gpus"][0]["fabric"]["state"] == "not-started"
    assert one(payload, "fabric-not-ready")["severity"] == "fail"


def test_the_older_fabric_call_answers_where_the_driver_refuses_the_versioned_struct(fake_nvml_env, tmp_path):
    env = {**fake_nvml_env({**hgx_config(2), "fabric.v1_only": 1}), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, HGX_DRIVER))}
    _, payload = check(env)
    assert payload["host"]["gpus"][0]["fabric"]["state"] == "in-progress"


@pytest.mark.parametrize("call", NEW_CALLS[:3] + ("nvmlDeviceGetGpuFabricInfoV",))
def test_each_new_call_answering_not_supported_or_an_error_is_no_crash(fake_nvml_env, tmp_path, call):
    for code in (3, 999):
        env = {**fake_nvml_env({**hgx_config(3), f"fail.{call}": code}), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, HGX_DRIVER))}
        _, payload = check(env)
        assert payload["host"]["driver"]["nvml_state"] == "ok"
        assert len(payload["host"]["gpus"]) == 8
        assert not findings(payload, "internal-error")
        gpu = payload["host"]["gpus"][0]
        if call == "nvmlDeviceGetNvLinkState":
            assert gpu["nvlink_links"] == (0 if code == 3 else None)
        if call == "nvmlDeviceGetGpuFabricInfoV":
            assert gpu["fabric"] == ({"state": "not-supported", "status": None, "clique_id": None, "cluster_uuid": None} if code == 3 else None)


def test_a_p2p_call_that_hangs_is_stopped_by_the_watchdog(fake_nvml_env, tmp_path):
    env = {**fake_nvml_env({**hgx_config(3), "hang.nvmlDeviceGetP2PStatus": 1}), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, HGX_DRIVER))}
    code, payload = check(env, "--nvml-timeout", "1")
    assert code == 1 and payload["host"]["driver"]["nvml_state"] == "hung"
    assert one(payload, "nvml-hung")["severity"] == "fail"


def test_a_fabric_call_that_crashes_is_reported_not_fatal(fake_nvml_env, tmp_path):
    env = {**fake_nvml_env({**hgx_config(3), "crash.nvmlDeviceGetGpuFabricInfoV": 1}), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, HGX_DRIVER))}
    code, payload = check(env)
    assert code == 1 and payload["host"]["driver"]["nvml_state"] == "crashed"


# ---- system facts and their checks -----------------------------------------------------------------


def test_small_shm_low_memlock_infiniband_without_peermem_and_a_translating_iommu(fake_nvml_env, tmp_path):
    root = system_root(tmp_path, PCIE_DRIVER, shm="65536k", memlock="8388608", iommu="DMA-FQ", infiniband=("mlx5_0", "mlx5_1"))
    env = {**fake_nvml_env(two_socket_pcie_config()), "CUDADOCTOR_SYSROOT": str(root)}
    _, payload = check(env)
    facts = payload["host"]["system"]["interconnect"]
    assert facts["shm_bytes"] == 64 * 1024**2 and facts["memlock_bytes"] == 8388608 and facts["memlock_unlimited"] is False
    assert facts["iommu"] == "translated" and facts["peermem_loaded"] is False
    assert [d["name"] for d in facts["infiniband"]] == ["mlx5_0", "mlx5_1"]
    assert one(payload, "shm-too-small")["title"] == "/dev/shm is 64 MiB: too small for a job of 8 GPUs (at least 8 GiB)"
    assert "--ulimit memlock=-1" in one(payload, "memlock-too-low")["hint"]
    assert "sudo modprobe nvidia-peermem" in one(payload, "ib-no-peermem")["hint"]
    assert "iommu=pt" in one(payload, "iommu-translated")["hint"]


def test_a_well_set_up_host_has_none_of_the_system_findings(fake_nvml_env, tmp_path):
    root = system_root(tmp_path, PCIE_DRIVER, iommu="identity", infiniband=("mlx5_0",), peermem=True)
    env = {**fake_nvml_env(two_socket_pcie_config()), "CUDADOCTOR_SYSROOT": str(root)}
    _, payload = check(env)
    assert payload["host"]["system"]["interconnect"]["iommu"] == "passthrough"
    codes = {f["code"] for f in payload["findings"]}
    assert not codes & {"shm-too-small", "memlock-too-low", "ib-no-peermem", "iommu-translated", "p2p-disabled-by-env"}


def test_nccl_variables_that_turn_transports_off_are_named(pcie):
    env = {**pcie(), "NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1", "NCCL_IB_DISABLE": "1"}
    _, payload = check(env)
    assert one(payload, "p2p-disabled-by-env")["title"].startswith("NCCL_P2P_DISABLE=1: NCCL will not use peer-to-peer")
    disabled = findings(payload, "nccl-transport-disabled")
    assert [f["title"].split("=")[0] for f in disabled] == ["NCCL_SHM_DISABLE"]  # IB off matters only where IB is
    _, off = check({**pcie(), "NCCL_P2P_DISABLE": "0"})
    assert not findings(off, "p2p-disabled-by-env")


def test_the_nccl_wheel_next_to_torch_needs_its_cuda_majors_driver(fake_nvml_env, tmp_path):
    site = tmp_path / "site"
    (site / "torch-2.5.1+cu121.dist-info").mkdir(parents=True)
    (site / "nvidia_nccl_cu12-2.21.5.dist-info").mkdir()
    config = {"driver": "470.82.01", "cuda": 11040, "count": 2, **gpu_config(0, "Tesla T4", cc="7.5"), **gpu_config(1, "Tesla T4", cc="7.5")}
    env = {**fake_nvml_env(config), "CUDADOCTOR_SYSROOT": str(system_root(tmp_path, "470.82.01")), "PYTHONPATH": str(site)}
    _, payload = check(env)
    facts = payload["host"]["system"]["interconnect"]
    assert (facts["nccl_package"], facts["nccl_version"]) == ("nvidia-nccl-cu12", "2.21.5")
    too_old = one(payload, "nccl-driver-too-old")
    assert too_old["severity"] == "fail" and "525.60.13" in too_old["hint"]


# ---- the launch line ------------------------------------------------------------------------------


def test_a_run_line_passing_fewer_gpus_than_the_job_wants_fails(pcie):
    code, payload = check(pcie(), "--gpus-per-job", "8", "--run", f"docker run --gpus 2 --ipc=host {PYTORCH_IMAGE}")
    short = one(payload, "multi-gpu-run-gpus-short")
    assert code == 1 and short["title"] == "The run line passes 2 GPU(s) to a job of 8" and "--gpus all" in short["hint"]
    _, enough = check(pcie(), "--gpus-per-job", "4", "--run", f"docker run --gpus 4 --ipc=host {PYTORCH_IMAGE}")
    assert not findings(enough, "multi-gpu-run-gpus-short")


def test_with_infiniband_the_run_line_needs_memlock_and_the_devices(fake_nvml_env, tmp_path):
    root = system_root(tmp_path, PCIE_DRIVER, infiniband=("mlx5_0",), peermem=True)
    env = {**fake_nvml_env(two_socket_pcie_config()), "CUDADOCTOR_SYSROOT": str(root)}
    _, bare = check(env, "--run", f"docker run --gpus all --ipc=host {PYTORCH_IMAGE}")
    assert "--ulimit memlock=-1" in one(bare, "multi-gpu-run-memlock")["title"]
    assert "mlx5_0" in one(bare, "multi-gpu-run-no-infiniband")["title"]
    _, ready = check(env, "--run", f"docker run --gpus all --ipc=host --ulimit memlock=-1 --device /dev/infiniband {PYTORCH_IMAGE}")
    assert not findings(ready, "multi-gpu-run-memlock") and not findings(ready, "multi-gpu-run-no-infiniband")


# ---- snapshots, input --------------------------------------------------------------------------------


def test_a_snapshot_from_before_the_pair_facts_loads_and_says_the_path_is_unknown():
    run = run_cli("check", "--json", "--snapshot", host("h100-550"))
    payload = run.json()
    assert payload["host"]["gpus"][0]["peers"] is None
    assert one(payload, "multi-gpu-path")["title"] == "8 GPUs: how they reach each other is not known"


def test_a_probed_snapshot_keeps_the_pair_matrix(pcie, tmp_path):
    env = {**NO_DOCKER, **pcie()}
    out = tmp_path / "host.json"
    assert run_cli("probe", "--output", str(out), env=env).exit_code == 0
    snapshot = json.loads(out.read_text())
    assert snapshot["host"]["gpus"][0]["peers"][4]["p2p_read"] == "topology-not-supported"
    payload = run_cli("check", "--json", "--snapshot", str(out)).json()
    assert one(payload, "multi-gpu-path")["title"].startswith("GPUs 0-3 and 4-7 talk through the CPU")


@pytest.mark.parametrize("value", ["0", "-1", "two", "65"])
def test_a_bad_gpus_per_job_is_one_line_and_exit_2(value):
    run = run_cli("check", "--snapshot", host("h100-550"), "--gpus-per-job", value)
    assert run.exit_code == 2 and "--gpus-per-job" in run.stderr and "Traceback" not in run.stderr


# ---- the pure parts -------------------------------------------------------------------------------------


def test_islands_are_the_groups_joined_by_peer_to_peer():
    matrix = {(0, 1): TIER_NVLINK, (0, 2): TIER_HOST, (1, 2): TIER_HOST, (0, 3): TIER_HOST, (1, 3): TIER_HOST, (2, 3): TIER_PCIE}
    assert islands([0, 1, 2, 3], matrix) == [[0, 1], [2, 3]]
    assert islands([0, 1, 2, 3], matrix, (TIER_NVLINK,)) == [[0, 1], [2], [3]]
    assert islands([3, 2, 1, 0], {}) == [[0], [1], [2], [3]]


def test_indices_are_said_as_ranges():
    assert index_ranges([3, 1, 2, 0]) == "0-3"
    assert index_ranges([0, 2, 3, 5]) == "0,2-3,5"
    assert said_together(["0-1", "2-3", "4-7"]) == "0-1, 2-3 and 4-7"


# ---- --topology: the pair facts of another host's snapshot ----------------------------------------


def test_a_plan_takes_its_pair_facts_from_a_topology_snapshot(pcie, tmp_path):
    out = tmp_path / "pcie.json"
    assert run_cli("probe", "--output", str(out), env={**NO_DOCKER, **pcie()}).exit_code == 0
    plan = ["--driver", "580.65.06", *[arg for _ in range(8) for arg in ("--gpu", "L40S")]]
    payload = run_cli("check", "--json", *plan, "--topology", str(out)).json()
    assert one(payload, "multi-gpu-path")["title"].startswith("GPUs 0-3 and 4-7 talk through the CPU")
    without = run_cli("check", "--json", *plan).json()
    assert one(without, "multi-gpu-path")["severity"] == "info"  # a plan alone does not know the pairs


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--gpu", "L40S", "--gpu", "L40S"], "it describes 8 GPU(s), the host judged has 2"),
        ([], "it holds no pair facts"),
    ],
)
def test_a_topology_snapshot_that_cannot_apply_is_one_line_and_exit_2(pcie, tmp_path, extra, words):
    source = host("h100-550")
    if extra:
        source = str(tmp_path / "pcie.json")
        assert run_cli("probe", "--output", source, env={**NO_DOCKER, **pcie()}).exit_code == 0
    run = run_cli("check", "--snapshot", host("h100-550"), *extra, "--topology", source)
    assert run.exit_code == 2 and words in run.stderr and len(run.stderr.strip().splitlines()) == 1


# ---- probe --nfd -----------------------------------------------------------------------------------

NFD = "cudadoctor.feature.node.kubernetes.io/multi-gpu."


def nfd_labels(env: dict[str, str]) -> dict[str, str]:
    run = run_cli("probe", "--nfd", env={**NO_DOCKER, **env})
    assert run.exit_code == 0, run.stderr
    return dict(line[len(NFD):].split("=", 1) for line in run.stdout.splitlines() if line.startswith(NFD))


def test_nfd_labels_say_nvlink_p2p_and_the_fabric_of_an_hgx_board(hgx):
    assert nfd_labels(hgx(fabric=3)) == {
        "p2p": "all", "nvlink": "all", "p2p-groups": "1", "fabric": "completed", "nvlink-domain": "ab" * 16 + ".1",
    }  # fmt: skip
    not_started = nfd_labels(hgx(fabric=1))
    assert not_started["fabric"] == "not-started" and not_started["nvlink"] == "none" and "nvlink-domain" not in not_started


def test_nfd_labels_of_a_two_socket_host_and_of_a_host_without_pair_facts(pcie, fake_nvml_env):
    assert nfd_labels(pcie()) == {"p2p": "some", "nvlink": "none", "p2p-groups": "2"}
    assert nfd_labels(fake_nvml_env(two_socket_pcie_config(), omit=NEW_CALLS)) == {}


def test_a_fleet_of_hgx_boards_is_judged_as_one_kind_of_host(hgx, tmp_path):
    snapshots = tmp_path / "fleet"
    snapshots.mkdir()
    for name in ("node-a", "node-b"):
        path = snapshots / f"{name}.json"
        assert run_cli("probe", "--output", str(path), env={**NO_DOCKER, **hgx(fabric=3)}).exit_code == 0
        document = json.loads(path.read_text())
        document["host"]["hostname"] = name
        for gpu in document["host"]["gpus"]:  # each board has its own NVLink domain
            gpu["fabric"]["cluster_uuid"] = name.encode().hex().ljust(32, "0")
        path.write_text(json.dumps(document))
    payload = run_cli("fleet", "--json", str(snapshots)).json()
    assert len(payload["groups"]) == 1 and sorted(payload["groups"][0]["hosts"]) == ["node-a", "node-b"]


def test_odd_pair_facts_in_a_snapshot_give_a_report_not_an_internal_error(pcie, tmp_path):
    out = tmp_path / "host.json"
    assert run_cli("probe", "--output", str(out), env={**NO_DOCKER, **pcie()}).exit_code == 0
    original = json.loads(out.read_text())
    mutations = [
        lambda g: g[0]["peers"][0].update(index=0),  # a GPU listed as its own peer
        lambda g: g[1]["peers"].extend(g[1]["peers"]),  # every pair twice
        lambda g: g[2]["peers"][0].update(index=63, p2p_read="bogus"),  # a GPU the host lacks, a word NVML never says
        lambda g: g[3].update(peers=[]),
        lambda g: g[4].update(fabric={"state": "bogus", "status": -1, "clique_id": None, "cluster_uuid": ""}),
        lambda g: g[5].update(nvlink_links=4, nvlink_active=9),
    ]
    for mutate in mutations:
        document = json.loads(json.dumps(original))
        mutate(document["host"]["gpus"])
        out.write_text(json.dumps(document))
        for extra in ((), ("--gpus-per-job", "3")):
            run = run_cli("check", "--json", "--snapshot", str(out), *extra)
            assert run.exit_code in (0, 1) and "internal-error" not in run.codes(), run.stdout[-2000:]
