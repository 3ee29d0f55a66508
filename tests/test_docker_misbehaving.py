"""Daemons that misbehave (issue 12, item 4): small HTTP servers on a unix socket, in the test,
that answer the wrong shapes, never answer, or trickle bytes. The real docker SDK talks to them
through the real CLI; every case ends in a finding, within its bound, never a crash or a hang."""

from __future__ import annotations

import json
import os
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from helpers import Run, host, run_cli

VERSION = {"Version": "27.3.1", "ApiVersion": "1.47", "MinAPIVersion": "1.24", "Os": "linux", "Arch": "amd64"}
INFO = {"Runtimes": {"runc": {"path": "runc"}}, "DefaultRuntime": "runc", "OSType": "linux", "Architecture": "x86_64"}
IMAGE = {"Id": "sha256:" + "0" * 64, "Os": "linux", "Architecture": "amd64",
         "Config": {"Env": ["PATH=/usr/bin", "NVIDIA_REQUIRE_CUDA=cuda>=12.4"], "Labels": {}}}  # fmt: skip

# A route: (method, path suffix) -> what to do. A value is JSON to answer, or a callable that
# gets the handler and does anything (never answer, trickle, ...).
Routes = dict[tuple[str, str], Any]


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(path: str, routes: Routes) -> _Server:
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet, and a unix socket has no client address
            pass

        def address_string(self) -> str:
            return "unix"

        def _route(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            path = self.path.split("?", 1)[0]
            for (m, suffix), action in routes.items():
                if m == method and path.endswith(suffix):
                    if callable(action):
                        action(self, stop)
                    else:
                        self.answer(200, action)
                    return
            self.answer(404, {"message": f"No such image: {path}"})

        def answer(self, status: int, data: Any) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_HEAD(self) -> None:
            self._route("HEAD")

    server = _Server(path, Handler)
    server.stop_event = stop  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def never_answer(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
    stop.wait(120)


def trickle(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
    """Headers at once, then one byte of a never-ending body every 0.3 s: each read succeeds
    well within any per-read timeout, so only a deadline for the whole call ends it."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    handler.wfile.write(b'{"Version": "')
    handler.wfile.flush()
    while not stop.wait(0.3):
        try:
            handler.wfile.write(b"1")
            handler.wfile.flush()
        except OSError:
            return


@pytest.fixture
def daemon(tmp_path: Path):
    servers: list[_Server] = []

    def start(routes: Routes) -> str:
        path = str(tmp_path / f"d{len(servers)}.sock")
        servers.append(serve(path, routes))
        return f"unix://{path}"

    yield start
    for server in servers:
        server.stop_event.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()


def run(args: list[str], docker_host: str, timeout: float = 90) -> tuple[Run, float]:
    start = time.monotonic()
    ran = run_cli("check", "--json", "--snapshot", host("h100-550"), *args, env={"DOCKER_HOST": docker_host}, timeout=timeout)
    return ran, time.monotonic() - start


def findings(proc: Run) -> dict[str, dict]:
    assert proc.exit_code in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    return {f["code"]: f for f in json.loads(proc.stdout)["findings"]}


@pytest.mark.parametrize("shape", [[1, 2], "info", 42, None])
def test_info_of_the_wrong_shape_is_a_finding(daemon, shape: Any) -> None:
    proc, _ = run(["--docker"], daemon({("GET", "/version"): VERSION, ("GET", "/info"): shape}))
    found = findings(proc)
    assert "docker-unexpected-answer" in found, sorted(found)
    assert "unexpected" in found["docker-unexpected-answer"]["title"]


def test_version_of_the_wrong_shape_is_a_finding(daemon) -> None:
    # The SDK reads /version itself first (API negotiation); whatever it makes of a list, no crash.
    proc, _ = run(["--docker"], daemon({("GET", "/version"): ["27"], ("GET", "/info"): INFO}))
    found = findings(proc)
    assert found.keys() & {"docker-unexpected-answer", "docker-unreachable"}, sorted(found)


def test_odd_fields_inside_info_are_unknown_not_a_crash(daemon) -> None:
    info = {"Runtimes": ["nvidia"], "DefaultRuntime": {"x": 1}, "OSType": [1], "Architecture": 10**400,
            "CDISpecDirs": "/etc/cdi"}  # fmt: skip
    version = {**VERSION, "Version": {"nested": True}}
    proc, _ = run(["--docker"], daemon({("GET", "/version"): version, ("GET", "/info"): info}))
    found = findings(proc)
    assert "docker-ok" in found
    docker = json.loads(proc.stdout)["host"]["docker"]
    assert docker["runtimes"] == [] and docker["default_runtime"] is None and docker["architecture"] is None


def test_a_trickling_daemon_is_cut_off_at_the_deadline(daemon) -> None:
    proc, took = run(["--docker", "--timeout", "3"], daemon({("GET", "/version"): trickle, ("GET", "/info"): trickle}))
    found = findings(proc)
    assert json.loads(proc.stdout)["host"]["docker"]["state"] == "timeout"
    assert "docker-unreachable" in found
    # The bound is 3 s for the whole conversation (the old per-read bound let this run 8 s);
    # the rest is the interpreter's start-up on a loaded machine.
    assert took < 3 + 3.5, took


def test_a_daemon_that_accepts_and_never_answers(daemon) -> None:
    proc, took = run(["--docker", "--timeout", "1"], daemon({("GET", "/version"): never_answer}))
    assert json.loads(proc.stdout)["host"]["docker"]["state"] == "timeout"
    assert took < 1 + 3.5, took


def test_an_image_inspection_that_never_answers(daemon) -> None:
    routes = {("GET", "/version"): VERSION, ("GET", "/info"): INFO, ("GET", "/json"): never_answer}
    proc, took = run(["--image", "cdtest/x:1", "--timeout", "2"], daemon(routes))
    findings(proc)
    assert took < 2 + 3.5, took


def test_a_pull_that_never_answers_is_bounded_by_pull_timeout(daemon) -> None:
    routes = {("GET", "/version"): VERSION, ("GET", "/info"): INFO, ("POST", "/images/create"): never_answer}
    proc, took = run(["--image", "cdtest/x:1", "--pull", "--pull-timeout", "2"], daemon(routes))
    found = findings(proc)
    assert any("--pull-timeout" in (f.get("detail") or "") + f["title"] for f in found.values()), sorted(found)
    assert took < 2 + 5 + 3.5, took


def test_a_pull_whose_stream_reports_an_error(daemon) -> None:
    def failing_pull(handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        body = b'{"status":"Pulling from cdtest/x"}\r\n{"error":"manifest unknown","errorDetail":{"message":"manifest unknown"}}\r\n'
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    routes = {("GET", "/version"): VERSION, ("GET", "/info"): INFO, ("POST", "/images/create"): failing_pull}
    proc, _ = run(["--image", "cdtest/x:1", "--pull"], daemon(routes))
    found = findings(proc)
    assert any("manifest unknown" in (f.get("detail") or "") for f in found.values()), found


def test_a_smoke_run_that_never_starts_is_bounded_by_smoke_timeout(daemon) -> None:
    routes = {("GET", "/version"): VERSION, ("GET", "/info"): INFO, ("GET", "/json"): IMAGE,
              ("POST", "/containers/create"): never_answer}  # fmt: skip
    proc, took = run(["--image", "cdtest/x:1", "--smoke", "--smoke-timeout", "2"], daemon(routes))
    found = findings(proc)
    assert "image-smoke-failed" in found, sorted(found)
    assert "--smoke-timeout" in found["image-smoke-failed"]["detail"]
    assert took < 2 + 5 + 3.5, took


def test_smoke_output_of_the_wrong_shape() -> None:
    from cudadoctor.probe.smoke import MARKER, read_smoke_output

    for line in ("[1, 2]", '{"torch": [1], "count": "8", "available": "yes", "op": 1}', "1" * 5000, "{" * 100000):
        facts = read_smoke_output({"StatusCode": 0}, f"{MARKER}{line}\n")
        assert facts.torch_version is None and facts.device_count is None and facts.cuda_available is None
    assert read_smoke_output(["odd"], "").exit_code is None


def test_progress_only_on_a_terminal() -> None:
    import io

    from cudadoctor.report.console import status_line

    assert status_line(io.StringIO()) is None

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    line = status_line(terminal)
    assert line is not None
    line("pulling x: 1 of 3 layers, 10 MiB of 30 MiB")
    line("")
    assert "1 of 3 layers" in terminal.getvalue() and "\n" not in terminal.getvalue()


def test_the_options_are_in_help() -> None:
    from hardening import run_main

    text = run_main(["check", "--help"]).stdout
    for option in ("--timeout", "--pull-timeout", "--smoke-timeout", "--nvml-timeout"):
        assert option in text
    assert "1800" in text and "180" in text


# ---- sysfs, which is the kernel's but can still hold what no UTF-8 reader expects ---------------


def test_non_utf8_bytes_in_sysfs_pci_files(tmp_path: Path) -> None:
    from sysroot import make_sysroot

    from cudadoctor.model.snapshot import decode_snapshot, snapshot_to_dict
    from cudadoctor.model.facts import HostFacts
    from cudadoctor.probe.system import probe_system

    root = make_sysroot(tmp_path / "root")
    devices = root / "sys/bus/pci/devices"
    (device,) = list(devices.iterdir())
    (device / "vendor").write_bytes(b"0x10\xff\xfe\n")
    (device / "device").write_bytes(b"\x1b[31m\x80\n")
    odd = devices / os.fsdecode(b"0000:\xff:00.0")
    odd.mkdir()
    (odd / "class").write_bytes(b"0x030200\n")
    (odd / "vendor").write_bytes(b"0x10de\n")
    (odd / "device").write_bytes(b"0x2330\n")
    facts = probe_system(root=str(root), environ={})
    found = {d.address: d for d in facts.pci_display_devices}
    assert found[device.name].vendor == "unknown" and found[device.name].device_id is None
    assert all(address.isascii() for address in found)
    # What the probe found survives a snapshot round trip (no lone surrogate in it).
    text = json.dumps(snapshot_to_dict(HostFacts(system=facts)))
    assert decode_snapshot(text).system == facts
