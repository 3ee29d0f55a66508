"""The NVML probe through the real nvidia-ml-py bindings against the stand-in libnvidia-ml.so.1.

Each probe runs in a fresh subprocess: the loader reads LD_LIBRARY_PATH at process start and
pynvml keeps the library it loaded. See tests/nvml_stub.py and tests/fake_nvml/fake_nvml.c.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import nvml_stub
from helpers import Run, run_cli

REPO_ROOT = Path(__file__).resolve().parent.parent

PROBE = (
    "import json; from cudadoctor.probe.nvml import probe_nvml; from cudadoctor.model.snapshot import to_jsonable; "
    "d, g = probe_nvml(); print(json.dumps(to_jsonable({'driver': d, 'gpus': g})))"
)

A100 = nvml_stub.gpu_config(0, "NVIDIA A100-SXM4-80GB", brand=2, cc="8.0", memory=85899345920)
RTX4090 = nvml_stub.gpu_config(1, "NVIDIA GeForce RTX 4090", brand=5, cc="8.9", memory=25757220864)
TWO_GPUS = {"driver": "535.104.05", "cuda": 12020, "nvml": "12.535.104.05", "count": 2, **A100, **RTX4090}


def subprocess_env(overrides: dict[str, str]) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("LD_LIBRARY_PATH", "FAKE_NVML_CONFIG")}
    env.update(overrides)
    return env


def run_python(code: str, overrides: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=subprocess_env(overrides),
        capture_output=True, text=True, timeout=120,
    )


def probe(overrides: dict[str, str]) -> dict:
    result = run_python(PROBE, overrides)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def probe_host(fake_nvml_env):
    """``probe_host(config, omit=()) -> {"driver": {...}, "gpus": [...]}`` from a subprocess."""
    return lambda config, omit=(): probe(fake_nvml_env(config, omit=omit))


# ---- a healthy host ----------------------------------------------------------------------------


def test_driver_facts_read_raw_and_cuda_version_formatted(probe_host):
    driver = probe_host(TWO_GPUS)["driver"]
    assert driver["nvml_state"] == "ok"
    assert driver["nvml_error"] is None
    assert driver["driver_version"] == "535.104.05"
    assert driver["cuda_driver_version"] == "12.2"
    assert driver["nvml_version"] == "12.535.104.05"


@pytest.mark.parametrize("cuda, text", [(11080, "11.8"), (12040, "12.4"), (12090, "12.9"), (13000, "13.0")])
def test_cuda_driver_version_formats(probe_host, cuda, text):
    assert probe_host({"cuda": cuda})["driver"]["cuda_driver_version"] == text


def test_every_gpu_read(probe_host):
    gpus = probe_host(TWO_GPUS)["gpus"]
    assert [g["index"] for g in gpus] == [0, 1]
    a100, rtx = gpus
    assert a100["name"] == "NVIDIA A100-SXM4-80GB"
    assert a100["uuid"] == A100["gpu0.uuid"]
    assert a100["brand"] == "tesla"
    assert a100["compute_capability"] == "8.0"
    assert a100["memory_total_bytes"] == 85899345920
    assert a100["pci_bus_id"] == "00000000:07:00.0"
    assert a100["persistence_mode"] is True
    assert a100["lost"] is False
    assert a100["source"] == "nvml"
    assert rtx["name"] == "NVIDIA GeForce RTX 4090"
    assert rtx["brand"] == "geforce"
    assert rtx["compute_capability"] == "8.9"
    assert rtx["memory_total_bytes"] == 25757220864
    assert rtx["pci_bus_id"] == "00000000:17:00.0"


def test_health_counters_read(probe_host):
    config = {**TWO_GPUS, "gpu0.retired_pending": 1, "gpu0.remap_pending": 1, "gpu0.remap_failure": 0,
              "gpu0.ecc_uncorrected": 3, "gpu0.ecc_corrected": 40}
    a100, rtx = probe_host(config)["gpus"]
    assert a100["retired_pages_pending"] is True
    assert a100["remapped_rows_pending"] is True
    assert a100["remapped_rows_failure"] is False
    assert a100["ecc_uncorrectable_volatile"] == 3  # the uncorrected volatile counter, not the corrected one
    assert rtx["retired_pages_pending"] is False
    assert rtx["ecc_uncorrectable_volatile"] == 0


def test_no_gpus(probe_host):
    result = probe_host({"count": 0})
    assert result["driver"]["nvml_state"] == "ok"
    assert result["gpus"] == []


def test_eight_gpus(probe_host):
    result = probe_host(nvml_stub.eight_gpu_config())
    assert result["driver"]["driver_version"] == "550.54.15"
    assert result["driver"]["cuda_driver_version"] == "12.4"
    gpus = result["gpus"]
    assert [g["index"] for g in gpus] == list(range(8))
    assert {g["name"] for g in gpus} == {"NVIDIA H100 80GB HBM3"}
    assert {g["compute_capability"] for g in gpus} == {"9.0"}
    assert len({g["uuid"] for g in gpus}) == 8
    assert len({g["pci_bus_id"] for g in gpus}) == 8


def test_unconfigured_host_has_sane_defaults(probe_host):
    result = probe_host("# nothing configured\n")
    assert result["driver"]["driver_version"] == "535.104.05"
    assert result["driver"]["cuda_driver_version"] == "12.2"
    [gpu] = result["gpus"]
    assert gpu["name"] and gpu["uuid"].startswith("GPU-")
    assert gpu["compute_capability"] == "8.0"
    assert gpu["memory_total_bytes"] > 0
    assert gpu["mig_enabled"] is None  # not MIG-capable unless configured
    assert gpu["mig_devices"] == []


# ---- MIG ---------------------------------------------------------------------------------------


def test_mig_instances_read_with_their_memory(probe_host):
    config = {
        **TWO_GPUS,
        "gpu0.mig": 1,
        "gpu0.mig.count": 2,
        "gpu0.mig0.name": "NVIDIA A100-SXM4-80GB MIG 3g.40gb",
        "gpu0.mig0.uuid": "MIG-11111111-2222-3333-4444-555555555555",
        "gpu0.mig0.memory": 42949672960,
        "gpu0.mig1.name": "NVIDIA A100-SXM4-80GB MIG 2g.20gb",
        "gpu0.mig1.uuid": "MIG-66666666-7777-8888-9999-000000000000",
        "gpu0.mig1.memory": 21474836480,
    }
    a100, rtx = probe_host(config)["gpus"]
    assert a100["mig_enabled"] is True
    assert a100["mig_devices"] == [
        {"index": 0, "uuid": "MIG-11111111-2222-3333-4444-555555555555",
         "name": "NVIDIA A100-SXM4-80GB MIG 3g.40gb", "memory_total_bytes": 42949672960},
        {"index": 1, "uuid": "MIG-66666666-7777-8888-9999-000000000000",
         "name": "NVIDIA A100-SXM4-80GB MIG 2g.20gb", "memory_total_bytes": 21474836480},
    ]
    assert a100["memory_total_bytes"] == 85899345920  # the parent GPU still reports its whole memory
    assert rtx["mig_enabled"] is None
    assert rtx["mig_devices"] == []


def test_mig_capable_but_disabled(probe_host):
    gpu = probe_host({**A100, "gpu0.mig": 0})["gpus"][0]
    assert gpu["mig_enabled"] is False
    assert gpu["mig_devices"] == []


def test_mig_enabled_without_instances(probe_host):
    gpu = probe_host({**A100, "gpu0.mig": 1, "gpu0.mig.count": 0})["gpus"][0]
    assert gpu["mig_enabled"] is True
    assert gpu["mig_devices"] == []


def test_one_unreadable_mig_field_keeps_the_rest(probe_host):
    config = {**A100, "gpu0.mig": 1, "gpu0.mig.count": 1, "gpu0.mig0.memory": 10737418240,
              "gpu0.mig0.fail.nvmlDeviceGetUUID": 3}
    [mig] = probe_host(config)["gpus"][0]["mig_devices"]
    assert mig["uuid"] is None
    assert mig["memory_total_bytes"] == 10737418240
    assert mig["name"] == "NVIDIA A100-SXM4-80GB MIG"


# ---- fields NVML cannot give -------------------------------------------------------------------


def test_not_supported_field_is_unknown_and_the_rest_is_read(probe_host):
    config = {**TWO_GPUS, "gpu1.fail.nvmlDeviceGetMemoryInfo": 3}  # NVML_ERROR_NOT_SUPPORTED
    a100, rtx = probe_host(config)["gpus"]
    assert rtx["memory_total_bytes"] is None
    assert rtx["name"] == "NVIDIA GeForce RTX 4090"
    assert rtx["brand"] == "geforce"
    assert rtx["compute_capability"] == "8.9"
    assert rtx["lost"] is False
    assert a100["memory_total_bytes"] == 85899345920


@pytest.mark.parametrize(
    "function, field",
    [
        ("nvmlDeviceGetBrand", "brand"),
        ("nvmlDeviceGetPciInfo_v3", "pci_bus_id"),
        ("nvmlDeviceGetPersistenceMode", "persistence_mode"),
        ("nvmlDeviceGetMigMode", "mig_enabled"),
        ("nvmlDeviceGetRetiredPagesPendingStatus", "retired_pages_pending"),
        ("nvmlDeviceGetRemappedRows", "remapped_rows_pending"),
        ("nvmlDeviceGetTotalEccErrors", "ecc_uncorrectable_volatile"),
        ("nvmlDeviceGetCudaComputeCapability", "compute_capability"),
    ],
)
def test_not_supported_everywhere(probe_host, function, field):
    gpus = probe_host({**TWO_GPUS, f"fail.{function}": 3})["gpus"]
    assert [g[field] for g in gpus] == [None, None]
    assert [g["name"] for g in gpus] == ["NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090"]


def test_system_field_failure_keeps_the_rest(probe_host):
    driver = probe_host({**TWO_GPUS, "fail.nvmlSystemGetNVMLVersion": 3})["driver"]
    assert driver["nvml_state"] == "ok"
    assert driver["nvml_version"] is None
    assert driver["driver_version"] == "535.104.05"


def test_function_not_found_field_is_unknown(probe_host):
    # An old driver's NVML lacks nvmlSystemGetCudaDriverVersion: the symbol is really absent,
    # so pynvml raises NVML_ERROR_FUNCTION_NOT_FOUND.
    result = probe_host(TWO_GPUS, omit=("nvmlSystemGetCudaDriverVersion",))
    assert result["driver"]["cuda_driver_version"] is None
    assert result["driver"]["driver_version"] == "535.104.05"
    assert result["driver"]["nvml_state"] == "ok"
    assert [g["name"] for g in result["gpus"]] == ["NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090"]


def test_function_not_found_device_field_is_unknown(probe_host):
    result = probe_host(TWO_GPUS, omit=("nvmlDeviceGetRemappedRows", "nvmlDeviceGetMigMode"))
    for gpu in result["gpus"]:
        assert gpu["remapped_rows_pending"] is None
        assert gpu["remapped_rows_failure"] is None
        assert gpu["mig_enabled"] is None
        assert gpu["memory_total_bytes"] is not None


def test_omitted_symbol_really_gives_function_not_found(fake_nvml_env):
    code = (
        "import pynvml\n"
        "pynvml.nvmlInit()\n"
        "try:\n"
        "    pynvml.nvmlSystemGetCudaDriverVersion()\n"
        "except pynvml.NVMLError_FunctionNotFound:\n"
        "    print('function-not-found', pynvml.nvmlSystemGetCudaDriverVersion_v2())\n"
    )
    result = run_python(code, fake_nvml_env({"cuda": 12020}, omit=("nvmlSystemGetCudaDriverVersion",)))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["function-not-found", "12020"]


# ---- lost GPUs ---------------------------------------------------------------------------------


def test_gpu_lost(probe_host):
    a100, rtx = probe_host({**TWO_GPUS, "gpu1.lost": 1})["gpus"]
    assert rtx["lost"] is True
    assert rtx["index"] == 1
    assert rtx["name"] is None
    assert a100["lost"] is False
    assert a100["name"] == "NVIDIA A100-SXM4-80GB"


def test_gpu_lost_after_handle(probe_host):
    # The handle was obtained but a later query found the GPU gone: lost, with what was read kept.
    rtx = probe_host({**TWO_GPUS, "gpu1.fail.nvmlDeviceGetMemoryInfo": 15})["gpus"][1]
    assert rtx["lost"] is True
    assert rtx["name"] == "NVIDIA GeForce RTX 4090"
    assert rtx["memory_total_bytes"] is None


def test_not_supported_is_not_lost(probe_host):
    gpu = probe_host({**A100, "gpu0.fail.nvmlDeviceGetPciInfo_v3": 3})["gpus"][0]
    assert gpu["lost"] is False


# ---- NVML cannot start -------------------------------------------------------------------------


def test_library_missing(nvml_missing_env):
    result = probe(nvml_missing_env)
    assert result["driver"]["nvml_state"] == "library-missing"
    assert "NVML Shared Library Not Found" in result["driver"]["nvml_error"]
    assert result["gpus"] == []


@pytest.mark.parametrize(
    "code, state, text",
    [
        (9, "driver-not-loaded", "Driver Not Loaded"),
        (18, "driver-mismatch", "RM has detected an NVML/RM version mismatch."),
        (4, "no-permission", "Insufficient Permissions"),
        (999, "error", "Unknown Error"),
        (17, "error", "The operating system has blocked the request."),
        # pynvml has no text of its own for 25, so this one comes through nvmlErrorString in C.
        (25, "error", "Argument version mismatch"),
    ],
)
def test_init_failure(probe_host, code, state, text):
    result = probe_host({**TWO_GPUS, "init": code})
    driver = result["driver"]
    assert driver["nvml_state"] == state
    assert text in driver["nvml_error"]
    assert str(code) in driver["nvml_error"]
    assert driver["driver_version"] is None
    assert result["gpus"] == []


def test_device_count_failure_keeps_driver_facts(probe_host):
    result = probe_host({**TWO_GPUS, "fail.nvmlDeviceGetCount_v2": 999})
    assert result["driver"]["driver_version"] == "535.104.05"
    assert result["gpus"] == []


# ---- the stub itself ---------------------------------------------------------------------------


def test_stub_builds_without_warnings(fake_nvml_lib, tmp_path):
    result = subprocess.run(
        [nvml_stub.gcc_path(), "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
         "-o", str(tmp_path / "stub.so"), str(nvml_stub.SOURCE)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr


def test_prepare_fake_host_for_benchmarks(tmp_path):
    if nvml_stub.gcc_path() is None:
        pytest.skip("gcc not found: cannot build the stand-in libnvidia-ml.so.1")
    env = nvml_stub.prepare_fake_host(tmp_path / "host")
    assert (Path(env["LD_LIBRARY_PATH"]) / "libnvidia-ml.so.1").is_file()
    assert len(probe(env)["gpus"]) == 8


# ---- through the command line ------------------------------------------------------------------


def cli_with(args: list[str], overrides: dict[str, str]) -> Run:
    """The command with the stand-in NVML's environment (subprocess_env) and ``overrides``."""
    env = subprocess_env(overrides)
    return run_cli(*args, env=env, unset=tuple(k for k in os.environ if k not in env))


def test_cli_probe_json_reports_the_gpus(fake_nvml_env):
    config = {**TWO_GPUS, "gpu0.mig": 1, "gpu0.mig.count": 1, "gpu0.mig0.memory": 42949672960}
    result = cli_with(["probe", "--json"], fake_nvml_env(config))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == 1
    assert data["kind"] == "cudadoctor-host-snapshot"
    host = data["host"]
    assert host["driver"]["nvml_state"] == "ok"
    assert host["driver"]["driver_version"] == "535.104.05"
    assert host["driver"]["cuda_driver_version"] == "12.2"
    assert [(g["name"], g["brand"], g["compute_capability"]) for g in host["gpus"]] == [
        ("NVIDIA A100-SXM4-80GB", "tesla", "8.0"),
        ("NVIDIA GeForce RTX 4090", "geforce", "8.9"),
    ]
    assert host["gpus"][0]["mig_devices"][0]["memory_total_bytes"] == 42949672960


def test_cli_probe_json_reports_an_init_failure_as_a_fact(fake_nvml_env):
    result = cli_with(["probe", "--json"], fake_nvml_env({**TWO_GPUS, "init": 18}))
    assert result.returncode == 0, result.stderr
    driver = json.loads(result.stdout)["host"]["driver"]
    assert driver["nvml_state"] == "driver-mismatch"
    assert "version mismatch" in driver["nvml_error"]
    assert json.loads(result.stdout)["host"]["gpus"] == []


def test_cli_probe_output_file_is_a_loadable_snapshot(fake_nvml_env, tmp_path):
    snapshot = tmp_path / "host.json"
    result = cli_with(["probe", "-o", str(snapshot)], fake_nvml_env(nvml_stub.eight_gpu_config()))
    assert result.returncode == 0, result.stderr
    load = (
        "import sys; from cudadoctor.app.loader import load_snapshot; f = load_snapshot(sys.argv[1]); "
        "print(len(f.gpus), f.driver.driver_version, f.gpus[7].compute_capability)"
    )
    loaded = subprocess.run([sys.executable, "-c", load, str(snapshot)], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.split() == ["8", "550.54.15", "9.0"]
