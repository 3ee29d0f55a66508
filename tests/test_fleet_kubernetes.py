"""The live path (`fleet --kubernetes`): the kubeconfig loaded by the real kubernetes client, the
nodes API read by cudadoctor's bounded reader (probe/http_get.py), against a loopback HTTP server that answers the nodes API as an API server does (label selectors, chunking with
limit/continue, bearer tokens, 401/403), and `probe --nfd` on the stand-in NVML."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, urlparse

import pytest

from fleet_nodes import mixed_cluster
from helpers import Run, invoke, run_cli

TOKEN = "test-token-fleet"
NODES = mixed_cluster(per_pool=3)["items"]


def selector_matches(selector: str, labels: dict[str, str]) -> bool:
    """The equality-based label selector grammar (k=v, k==v, k!=v, k, !k; ANDed by commas)."""
    for part in filter(None, (p.strip() for p in selector.split(","))):
        if "!=" in part:
            key, value = part.split("!=", 1)
            if labels.get(key) == value:
                return False
        elif "=" in part:
            key, value = part.replace("==", "=").split("=", 1)
            if labels.get(key) != value:
                return False
        elif part.startswith("!"):
            if part[1:] in labels:
                return False
        elif part not in labels:
            return False
    return True


class NodesApi(BaseHTTPRequestHandler):
    delay = 0.0
    requests: list[str] = []
    extra: list[Any] = []  # nodes listed after NODES

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        type(self).requests.append(self.path)
        if self.delay:
            time.sleep(self.delay)
        auth = self.headers.get("Authorization", "")
        if auth == "Bearer forbidden":
            return self._send(403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
                                    "message": 'nodes is forbidden: User "system:serviceaccount:default:x" cannot list resource "nodes"', "code": 403})
        if auth != f"Bearer {TOKEN}":
            return self._send(401, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Unauthorized", "message": "Unauthorized", "code": 401})
        url = urlparse(self.path)
        if url.path != "/api/v1/nodes":
            return self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})
        query = parse_qs(url.query)
        selector = query.get("labelSelector", [""])[0]
        items = [n for n in NODES + NodesApi.extra if selector_matches(selector, n["metadata"]["labels"])]
        start = int(query.get("continue", ["0"])[0] or 0)
        limit = int(query.get("limit", [str(len(items) or 1)])[0])
        page = items[start:start + limit]
        more = start + limit < len(items)
        self._send(200, {"kind": "NodeList", "apiVersion": "v1",
                         "metadata": {"resourceVersion": "48213377", **({"continue": str(start + limit)} if more else {})},
                         "items": page})


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (the --timeout test) closes its socket mid-answer; that is the point.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


@pytest.fixture()
def api_server() -> Iterator[ThreadingHTTPServer]:
    NodesApi.delay = 0.0
    NodesApi.requests = []
    NodesApi.extra = []
    server = QuietServer(("127.0.0.1", 0), NodesApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def kubeconfig(path: Path, port: int, token: str = TOKEN) -> dict[str, str]:
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "loop",
        "clusters": [{"name": "loop", "cluster": {"server": f"http://127.0.0.1:{port}"}},
                     {"name": "other", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "me", "user": {"token": token}}, {"name": "nobody", "user": {"token": "forbidden"}}],
        "contexts": [{"name": "loop", "context": {"cluster": "loop", "user": "me"}},
                     {"name": "restricted", "context": {"cluster": "other", "user": "nobody"}}],
    }))
    return {"KUBECONFIG": str(path)}


def test_live_nodes_through_the_kubernetes_client(api_server, tmp_path, monkeypatch):
    from cudadoctor.probe import kube  # the package attribute `cudadoctor.probe` is the API function

    monkeypatch.setattr(kube, "PAGE", 7)  # several pages: the client follows `continue`
    env = kubeconfig(tmp_path / "config", api_server.server_port)
    run = invoke("fleet", "--kubernetes", "--json", "--torch", "2.11", env=env)
    assert run.exit_code == 1, run.stderr  # the 470 pools fail 2.11
    doc = run.json()
    assert doc["hosts"] == len(NODES)
    assert doc["summary"]["unknown"] == 2
    assert len(NodesApi.requests) == -(-len(NODES) // 7)


def test_live_pages_give_the_report_the_same_nodes_give_from_a_file(api_server, tmp_path, monkeypatch):
    # Each page is decoded as a node list file is (fleet/sources.decode_hosts): page by page, the
    # same hosts, so the same document as `kubectl get nodes -o json > nodes.json; fleet nodes.json`.
    from cudadoctor.probe import kube

    monkeypatch.setattr(kube, "PAGE", 5)
    env = kubeconfig(tmp_path / "config", api_server.server_port)
    live = invoke("fleet", "--kubernetes", "--json", env=env)
    listed = tmp_path / "nodes.json"
    listed.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": NODES, "metadata": {"resourceVersion": ""}}))
    from_file = invoke("fleet", "--json", str(listed))
    assert live.exit_code == from_file.exit_code and live.stderr == ""
    assert live.json() == from_file.json()
    assert len(NodesApi.requests) == -(-len(NODES) // 5)


def test_a_live_node_that_cannot_be_read_is_a_warning_and_the_others_count(api_server, tmp_path, monkeypatch):
    from cudadoctor.probe import kube

    monkeypatch.setattr(kube, "PAGE", 4)
    broken = json.loads(json.dumps(NODES[0]))
    broken["metadata"]["name"] = "broken-0"
    broken["metadata"]["labels"]["nvidia.com/gpu.count"] = "eight"
    NodesApi.extra = [broken]
    env = kubeconfig(tmp_path / "config", api_server.server_port)
    run = invoke("fleet", "--kubernetes", "--json", env=env)
    assert run.exit_code in (0, 1), run.stderr
    assert "broken-0" in run.stderr and "nvidia.com/gpu.count" in run.stderr and "Traceback" not in run.stderr
    assert run.json()["hosts"] == len(NODES)


def test_live_selector_is_sent_to_the_api_server(api_server, tmp_path):
    env = kubeconfig(tmp_path / "config", api_server.server_port)
    run = invoke("fleet", "--kubernetes", "--selector", "nvidia.com/gpu.product=Tesla-T4", "--json", "--torch", "2.11", env=env)
    assert run.exit_code == 0, run.stderr
    doc = run.json()
    assert doc["hosts"] == 3 and {n for g in doc["groups"] for n in g["hosts"]} == {"t4-525-0", "t4-525-1", "t4-525-2"}
    assert parse_qs(urlparse(NodesApi.requests[0]).query)["labelSelector"] == ["nvidia.com/gpu.product=Tesla-T4"]


@pytest.mark.parametrize(
    "token, context, says",
    [("wrong", None, "401"), (TOKEN, "restricted", "403"), (TOKEN, "absent", "absent")],
)
def test_live_auth_errors_are_one_line(api_server, tmp_path, token, context, says):
    env = kubeconfig(tmp_path / "config", api_server.server_port, token)
    args = ["fleet", "--kubernetes"] + (["--context", context] if context else [])
    run = invoke(*args, env=env)
    assert run.exit_code == 2
    assert says in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert "Traceback" not in run.stderr


def test_live_unreachable_and_timeout(api_server, tmp_path):
    closed = ThreadingHTTPServer(("127.0.0.1", 0), NodesApi)
    port = closed.server_port
    closed.server_close()  # nothing listens there now
    env = kubeconfig(tmp_path / "config", port)
    run = invoke("fleet", "--kubernetes", "--timeout", "2", env=env)
    assert run.exit_code == 2 and "cannot be reached" in run.stderr

    NodesApi.delay = 3.0
    env = kubeconfig(tmp_path / "config2", api_server.server_port)
    started = time.monotonic()
    run = invoke("fleet", "--kubernetes", "--timeout", "0.5", env=env)
    assert run.exit_code == 2 and "did not answer within 0.5s" in run.stderr
    assert time.monotonic() - started < 3.0


def test_context_without_kubernetes_is_a_usage_error():
    assert invoke("fleet", "x.json", "--context", "a").exit_code == 2


# --- probe --nfd ----------------------------------------------------------------------------


def run_cli_env(args: list[str], overrides: dict[str, str]) -> Run:
    return run_cli(*args, env=overrides, unset=("LD_LIBRARY_PATH", "FAKE_NVML_CONFIG"))


def parse_features(text: str) -> dict[str, str]:
    """NFD's local source input format: `# comment`, `<ns>/<name>[=<value>]` (default "true")."""
    labels = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        assert "/" in key, line
        labels[key] = value or "true"
    return labels


def test_probe_nfd_on_an_h100_host(fake_nvml_env):
    from nvml_stub import eight_gpu_config

    result = run_cli_env(["probe", "--nfd"], fake_nvml_env(eight_gpu_config()))
    assert result.returncode == 0, result.stderr
    labels = parse_features(result.stdout)
    ns = "cudadoctor.feature.node.kubernetes.io"
    assert set(k.split("/")[0] for k in labels) == {ns}
    import re

    # Label values Kubernetes accepts: at most 63 characters of [A-Za-z0-9._-], alphanumeric ends.
    assert all(re.fullmatch(r"([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]", v) for v in labels.values())
    # The verdict is the default target's, as `check` gives it on the same host.
    default = json.loads(run_cli_env(["check", "--json"], fake_nvml_env(eight_gpu_config())).stdout)
    assert labels[f"{ns}/verdict"] == default["verdict"]
    # Driver 550.54.15 (CUDA 12.4) with H100s: PyTorch 2.5 fits cu124 with full support.
    assert labels[f"{ns}/torch-2.5"] == "cu124"
    assert labels[f"{ns}/torch-2.5.support"] == "full"
    # The same verdicts as `check --json` for the same host.
    check = json.loads(run_cli_env(["check", "--json", "--torch", "2.5"], fake_nvml_env(eight_gpu_config())).stdout)
    assert check["recommendation"]["variant"] == labels[f"{ns}/torch-2.5"]


def test_probe_nfd_refuses_json():
    assert invoke("probe", "--nfd", "--json").exit_code == 2


def test_no_kubeconfig_and_not_in_a_cluster(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config either
    run = invoke("fleet", "--kubernetes", env={"KUBECONFIG": str(tmp_path / "absent")})
    assert run.exit_code == 2
    assert "no usable Kubernetes configuration" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_kubeconfig_that_is_not_one(tmp_path):
    bad = tmp_path / "config"
    bad.write_text("clusters: [this is: not, a kubeconfig")
    run = invoke("fleet", "--kubernetes", env={"KUBECONFIG": str(bad)})
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_without_the_kubernetes_client(monkeypatch):
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # as if the extra were not installed
    run = invoke("fleet", "--kubernetes")
    assert run.exit_code == 2 and "cudadoctor[kubernetes]" in run.stderr
