"""docs/recipes: every Kubernetes manifest is accepted by the kubernetes client's models with no
field dropped, and each recipe's commands run on a stand-in GPU host (the C libnvidia-ml.so.1)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from helpers import REPO_ROOT
from nvml_stub import eight_gpu_config, gpu_config

RECIPES = REPO_ROOT / "docs" / "recipes"
MANIFESTS = {"nfd-daemonset.yaml": "V1DaemonSet", "collect-job.yaml": "V1Job", "preflight-initcontainer.yaml": "V1Pod"}
K80_HOST = {"driver": "470.256.02", "cuda": 11040, "nvml": "11.470.256.02", "count": 1, **gpu_config(0, "Tesla K80", cc="3.7", memory=12079136768)}


def manifest(name: str) -> dict[str, Any]:
    docs = list(yaml.safe_load_all((RECIPES / name).read_text()))
    assert len(docs) == 1
    return docs[0]


@pytest.mark.parametrize("name, model", sorted(MANIFESTS.items()))
def test_manifest_is_a_valid_kubernetes_object(name, model):
    from kubernetes.client import ApiClient

    data = manifest(name)
    client = ApiClient()
    obj = client._ApiClient__deserialize(data, model)
    # The model knows every field the manifest sets: serialising it back gives the manifest.
    assert client.sanitize_for_serialization(obj) == data


def test_every_recipe_is_listed_in_the_readme():
    readme = (RECIPES / "README.md").read_text()
    for path in RECIPES.iterdir():
        if path.name != "README.md":
            assert f"]({path.name})" in readme, path.name


def env_with(overrides: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "FAKE_NVML_CONFIG")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # the cudadoctor script
    env.update(overrides)
    return env


def container_script(data: dict[str, Any], init: bool = False) -> tuple[list[str], dict[str, str]]:
    spec = data["spec"]["template"]["spec"] if "template" in data["spec"] else data["spec"]
    container = (spec["initContainers"] if init else spec["containers"])[0]
    env = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}
    return container["command"] + container.get("args", []), env


def test_nfd_daemonset_writes_the_feature_file(fake_nvml_env, tmp_path):
    argv, env = container_script(manifest("nfd-daemonset.yaml"))
    features = tmp_path / "features.d"
    features.mkdir()
    env.update(FEATURES_DIR=str(features), ONCE="1", **fake_nvml_env(eight_gpu_config()))
    result = subprocess.run(argv, env=env_with(env), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert [p.name for p in features.iterdir()] == ["cudadoctor"]  # renamed into place, no dot-file left
    lines = [line for line in (features / "cudadoctor").read_text().splitlines() if line and not line.startswith("#")]
    assert "cudadoctor.feature.node.kubernetes.io/torch-2.5=cu124" in lines


def test_collect_job_writes_one_snapshot_per_node_and_fleet_reads_them(fake_nvml_env, tmp_path):
    argv, env = container_script(manifest("collect-job.yaml"))
    out = tmp_path / "snapshots"
    out.mkdir()
    for node, host in (("gpu-a", eight_gpu_config()), ("gpu-b", K80_HOST)):
        run_env = env_with({**env, "OUT_DIR": str(out), "NODE_NAME": node, **fake_nvml_env(host)})
        result = subprocess.run(argv, env=run_env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["gpu-a.json", "gpu-b.json"]
    fleet = subprocess.run(["cudadoctor", "fleet", str(out), "--json", "--torch", "2.11"], env=env_with({}), capture_output=True, text=True, timeout=120)
    doc = json.loads(fleet.stdout)
    assert doc["hosts"] == 2 and fleet.returncode == 1  # the K80 on 470 cannot run PyTorch 2.11
    assert doc["summary"]["fail"] == 1


def test_preflight_init_container_blocks_a_node_that_cannot_run(fake_nvml_env):
    argv, env = container_script(manifest("preflight-initcontainer.yaml"), init=True)
    ok = subprocess.run(argv, env=env_with({**env, **fake_nvml_env(eight_gpu_config())}), capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    blocked = subprocess.run(argv, env=env_with({**env, **fake_nvml_env(K80_HOST)}), capture_output=True, text=True, timeout=120)
    assert blocked.returncode == 1


def test_slurm_collection_with_srun(fake_nvml_env, tmp_path):
    # A stand-in srun: runs the task once here (as one node of the allocation), dropping its options.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text('#!/bin/sh\nwhile [ "${1#--}" != "$1" ]; do shift; done\nexec "$@"\n')
    srun.chmod(srun.stat().st_mode | stat.S_IEXEC)
    snapshots = tmp_path / "snapshots"
    env = env_with({"SNAPSHOTS": str(snapshots), **fake_nvml_env(eight_gpu_config())})
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    result = subprocess.run(["sh", str(RECIPES / "slurm-collect.sh"), "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    assert doc["hosts"] == 1 and len(list(snapshots.glob("*.json"))) == 1


def test_ansible_play_runs_probe_and_saves_per_host(fake_nvml_env):
    (play,) = yaml.safe_load((RECIPES / "ansible-probe.yml").read_text())
    probe, save = play["tasks"]
    command = probe["ansible.builtin.command"].split()
    assert save["ansible.builtin.copy"]["dest"] == "snapshots/{{ inventory_hostname }}.json"
    assert save["delegate_to"] == "localhost"
    result = subprocess.run(command, env=env_with(fake_nvml_env(eight_gpu_config())), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    assert json.loads(result.stdout)["kind"] == "cudadoctor-host-snapshot"
