"""docs/recipes/prometheus-*.yaml: the DaemonSet is a valid Kubernetes object whose script writes
metrics the client library parses, on a stand-in GPU host; the alert rule reads series that
cudadoctor writes, and its expression fires for the node that stops running the release."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml
from prometheus_client.parser import text_string_to_metric_families

from nvml_stub import gpu_config
from test_recipes_kubernetes import RECIPES, container_script, env_with, manifest

RTX5090 = {"count": 1, **gpu_config(0, "NVIDIA GeForce RTX 5090", cc="12.0", memory=34190917632)}
# One comparison of one series: metric{label="value"} OP number.
SIMPLE_EXPR = re.compile(r'^(?P<name>\w+)\{(?P<label>\w+)="(?P<value>[^"]+)"\} (?P<op><|>) (?P<bound>\d+)$')


def run_daemonset_once(tmp_path: Path, fake_nvml_env, host: dict[str, object]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from kubernetes.client import ApiClient

    data = manifest("prometheus-daemonset.yaml")
    client = ApiClient()
    assert client.sanitize_for_serialization(client._ApiClient__deserialize(data, "V1DaemonSet")) == data
    argv, env = container_script(data)
    textfile = tmp_path / "textfile"
    textfile.mkdir(parents=True)
    env.update(TEXTFILE_DIR=str(textfile), ONCE="1", **fake_nvml_env(host))
    result = subprocess.run(argv, env=env_with(env), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert [p.name for p in textfile.iterdir()] == ["cudadoctor.prom"]  # renamed into place, no temporary file left
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families((textfile / "cudadoctor.prom").read_text()) for s in family.samples}


def fires(expr: str, series: dict[tuple[str, tuple[tuple[str, str], ...]], float]) -> bool:
    match = SIMPLE_EXPR.match(expr)
    assert match, expr
    value = series[(match["name"], ((match["label"], match["value"]),))]
    bound = float(match["bound"])
    return value < bound if match["op"] == "<" else value > bound


def test_alert_fires_when_a_driver_rollback_stops_a_node_running_the_release(tmp_path: Path, fake_nvml_env):
    rules = yaml.safe_load((RECIPES / "prometheus-alerts.yaml").read_text())["groups"][0]["rules"]
    by_name = {rule["alert"]: rule for rule in rules}
    expr = by_name["NodeStoppedRunningTeamRelease"]["expr"]
    before = run_daemonset_once(tmp_path / "a", fake_nvml_env, {"driver": "580.95.05", "cuda": 13000, "nvml": "13.580.95.05", **RTX5090})
    after = run_daemonset_once(tmp_path / "b", fake_nvml_env, {"driver": "560.35.03", "cuda": 12060, "nvml": "12.560.35.03", **RTX5090})
    assert not fires(expr, before) and fires(expr, after)
    # The node still runs an older release: it is not failing, so the other alert stays quiet.
    assert not fires(by_name["CudadoctorNodeFails"]["expr"], after)
    for rule in rules:
        assert set(rule) >= {"alert", "expr", "labels", "annotations"}
