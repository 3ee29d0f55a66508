"""`cudadoctor table update` against a real HTTP server on loopback (http.server in a thread).

The server plays PyTorch's wheel index: a PEP 503 HTML and a PEP 691 JSON ``torch/`` page (chosen by
the Accept header) that hold a 2.16 the shipped table does not know, plus broken, slow, 404/500,
non-index and truncated answers. No test reaches the internet.
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import jsonschema
import pytest

from cudadoctor.compat.wheel_index import IndexPageError, infer_from, page_filenames, torch_wheels
from cudadoctor.app.loader import default_table_path
from helpers import Run, run_cli, start_cli

SHIPPED = json.loads(Path(default_table_path()).read_text())
SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "cudadoctor" / "schemas" / "table_update.schema.json").read_text())

TAGS = {
    "linux-x86_64": "cp311-cp311-manylinux_2_28_x86_64",
    "linux-aarch64": "cp311-cp311-manylinux_2_28_aarch64",
    "windows": "cp311-cp311-win_amd64",
}


def wheel(version: str, variant: str, platform: str) -> str:
    return f"torch-{version}+{variant}-{TAGS[platform]}.whl"


# What the fake index holds: 2.16.0 and 2.16.1 (cu130 and cu132 everywhere, cu136 -- a CUDA newer than
# the table's driver rows -- on Linux x86_64 only, and from 2.16.1 on), a 2.14.2 patch release, the
# known 2.12.1 cu129, CPU and macOS wheels that carry no CUDA variant, and one name that is no wheel.
FILES = (
    [wheel(v, cu, p) for v in ("2.16.0", "2.16.1") for cu in ("cu130", "cu132") for p in TAGS]
    + [wheel("2.16.1", "cu136", "linux-x86_64")]
    + [wheel("2.14.2", "cu130", p) for p in TAGS]
    + [wheel("2.12.1", "cu129", "linux-x86_64"), "torch-2.16.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl",
       "torch-2.16.0-cp311-none-macosx_11_0_arm64.whl", "torch-2.16.0.tar.gz", "torchvision-0.31.0+cu130-cp311-cp311-win_amd64.whl"]
)


def html_page(files: list[str]) -> bytes:
    anchors = "\n".join(f'<a href="/whl/{name.replace("+", "%2B")}#sha256=00">{name}</a><br/>' for name in files)
    return f"<!DOCTYPE html>\n<html><body><h1>Links for torch</h1>\n{anchors}\n</body></html>\n".encode()


def json_page(files: list[str]) -> bytes:
    return json.dumps({"meta": {"api-version": "1.1"}, "name": "torch",
                       "files": [{"filename": name, "url": f"/whl/{name}", "hashes": {}} for name in files]}).encode()


class Index(BaseHTTPRequestHandler):
    accepts: list[str] = []

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        Index.accepts.append(self.headers.get("Accept", ""))
        kind = self.path.strip("/").split("/")[0]
        if not self.path.endswith("/torch/"):
            self._send(404, b"not found", "text/plain")
        elif kind == "index":  # content negotiation as PEP 691 describes it
            if "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
                self._send(200, json_page(FILES), "application/vnd.pypi.simple.v1+json")
            else:
                self._send(200, html_page(FILES), "text/html; charset=utf-8")
        elif kind == "html":
            self._send(200, html_page(FILES), "text/html")
        elif kind == "html-only-known":
            self._send(200, html_page([wheel("2.15.0", "cu132", "linux-x86_64")]), "text/html")
        elif kind == "missing":
            self._send(404, b"<html>no</html>", "text/html")
        elif kind == "error":
            self._send(500, b"<html>oops</html>", "text/html")
        elif kind == "not-index":
            self._send(200, b"<html><body><p>Welcome to our site</p></body></html>", "text/html")
        elif kind == "not-index-json":
            self._send(200, b'{"hello": "world"}', "application/vnd.pypi.simple.v1+json")
        elif kind == "plain":
            self._send(200, b"torch-2.16.0+cu130.whl", "text/plain")
        elif kind == "broken-json":
            self._send(200, json_page(FILES)[:-40], "application/vnd.pypi.simple.v1+json")
        elif kind == "truncated":
            body = html_page(FILES)
            self._send(200, body[: len(body) // 2], "text/html", length=len(body))
            self.close_connection = True
        elif kind == "slow":  # headers at once, then a byte every 0.3 s: only a whole-call deadline stops it
            body = html_page(FILES)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for i in range(len(body)):
                    self.wfile.write(body[i : i + 1])
                    self.wfile.flush()
                    time.sleep(0.3)
            except OSError:
                pass
        else:
            self._send(404, b"", "text/plain")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def cli(*args: str, timeout: float = 60) -> Run:
    return run_cli(*args, timeout=timeout)


def overlay_file() -> Path:
    import os

    return Path(os.environ["CUDADOCTOR_CACHE"]) / "table-overlay.json"


def test_update_from_a_pep503_page_makes_2_16_usable_with_inferred_arch_lists(server):
    result = cli("table", "update", "--index-url", f"{server}/html", "--json")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # piped: no progress line
    report = json.loads(result.stdout)
    jsonschema.validate(report, SCHEMA)
    assert report["releases"] == ["2.16"] and report["written"] is True
    assert report["sha256"] == hashlib.sha256(html_page(FILES)).hexdigest()
    overlay = json.loads(overlay_file().read_text())
    assert overlay["index_url"] == f"{server}/html" and overlay["sha256"] == report["sha256"] and overlay["fetched_at"]

    view = json.loads(cli("table", "--torch", "2.16", "--json").stdout)
    variants = {v["name"]: v for v in view["variants"]}
    assert set(variants) == {"cu130", "cu132", "cu136"}
    assert view["full_version"] == "2.16.1"
    # 2.15's cu130 is unverified, so 2.16 cu130 borrows from 2.14's; cu132 from 2.15's (a read binary).
    for name, donor in (("cu130", "2.14 cu130"), ("cu132", "2.15 cu132")):
        assert variants[name]["evidence"] == "inferred" and variants[name]["inferred_from"] == donor
        assert variants[name]["arch_list"] == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
        assert variants[name]["platforms"] == ["linux-aarch64", "linux-x86_64", "windows"]
        assert variants[name]["platform_builds"][0]["arch_list"] == ["8.0", "9.0", "10.0", "11.0", "12.0"]
    # cu136: no 2.x release has CUDA 13.6; the nearest lower CUDA of major 13 (2.15 cu132) lends its list.
    assert variants["cu136"]["inferred_from"] == "2.15 cu132"
    assert variants["cu136"]["platforms"] == ["linux-x86_64"] and variants["cu136"]["first_patch"] == "2.16.1"

    rec = json.loads(cli("recommend", "--wheel", "--torch", "2.16", "--driver", "595.45.04", "--gpu", "H100", "--format", "json").stdout)
    chosen = rec["recommendation"]
    assert chosen["torch"] == "2.16" and chosen["evidence"] == "inferred"
    assert (chosen["variant"], chosen["support"]) == ("cu132", "full")  # full support beats cu136's floor
    assert any("inferred from PyTorch 2.15 cu132" in note for note in chosen["notes"])
    assert chosen["inferred_variants"] == ["cu130", "cu132", "cu136"]
    cu136 = next(r["reason"] for r in chosen["rejected"] if r["variant"] == "cu136")
    assert "None" not in cu136 and "no driver row" in cu136  # CUDA 13.6 is newer than the table's driver rows
    reasons = {r["variant"]: r["reason"] for r in chosen["rejected"]}
    assert "minor-version compatibility" in reasons["cu136"]

    # A family that offers only cu136: CUDA 13.6 has no driver row, so the 13.x floor judges it, and says so.
    families = Path(overlay_file().parent) / "only-cu136.toml"
    families.write_text('[[family]]\nname = "acme/edge"\nrepository = "acme/edge"\ntag_template = "{torch_full}-{variant}"\n'
                        '[family.offers]\n"2.16" = ["cu136"]\n')
    rec = json.loads(cli("recommend", "--torch", "2.16", "--driver", "595.45.04", "--gpu", "H100", "--families", str(families),
                         "--family", "acme/edge", "--format", "json").stdout)["recommendation"]
    assert (rec["variant"], rec["support"], rec["image"]) == ("cu136", "minor-compat", "acme/edge:2.16.1-cu136")
    assert any("CUDA 13.6 has no driver row in the table" in note for note in rec["notes"])
    assert rec["first_patch"] == "2.16.1" and "'torch==2.16.1'" in rec["pip_command"]
    windows = cli("recommend", "--torch", "2.16", "--snapshot", str(_windows_snapshot(families.parent)), "--driver",
                  "595.45.04", "--families",
                  str(families), "--family", "acme/edge", "--format", "json")
    assert windows.returncode == 1  # cu136 is published for Linux x86_64 only
    assert "Linux x86_64 only" in json.loads(windows.stdout)["no_recommendation"]["rejected"][0]["reason"]
    # Without --torch the newest release that runs here (overlay included) is the target: its wheels;
    # PyTorch's images of 2.16 are not in the table, so the newest image is 2.15's.
    rec = json.loads(cli("recommend", "--wheel", "--driver", "595.45.04", "--gpu", "H100", "--format", "json").stdout)
    assert rec["recommendation"]["torch"] == "2.16"
    rec = json.loads(cli("recommend", "--image", "--driver", "595.45.04", "--gpu", "H100", "--format", "json").stdout)
    assert rec["recommendation"]["torch"] == "2.15"

    # A newer patch of a shipped release is not taken: an overlay never changes a shipped release; the
    # update says what it left out.
    assert json.loads(cli("table", "--torch", "2.14", "--json").stdout)["full_version"] == "2.14.1"
    assert any("2.14.2" in line and "shipped table's stands" in line for line in report["ignored"])
    assert report["final_url"] == f"{server}/html/torch/"
    assert json.loads(cli("table", "--torch", "2.12", "--json").stdout)["variants"][1]["evidence"] == "build-script"  # cu129, as shipped

    sources = json.loads(cli("table", "--sources", "--json").stdout)
    text = json.dumps(sources)
    assert "wheel-index-overlay" in text and report["sha256"] in text and f"{server}/html" in text

    # --table FILE still wins: the shipped file alone does not know 2.16.
    result = cli("table", "--torch", "2.16", "--table", default_table_path())
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1


def _windows_snapshot(directory: Path) -> Path:
    """tests/hosts/h100-550.json as if probed on Windows (the snapshot's system.os is sys.platform)."""
    data = json.loads((Path(__file__).resolve().parent / "hosts" / "h100-550.json").read_text())
    data["host"]["system"] = dict(data["host"].get("system") or {}, os="win32", machine="AMD64")
    path = directory / "windows.json"
    path.write_text(json.dumps(data))
    return path


def test_merged_table_passes_the_same_validation(server, tmp_path):
    assert cli("table", "update", "--index-url", f"{server}/html").returncode == 0
    dump = tmp_path / "merged.json"
    dump.write_text(cli("table", "--json").stdout)
    result = cli("table", "--validate", str(dump))
    assert result.returncode == 0, result.stderr
    assert "31 PyTorch releases" in result.stdout


def test_pep691_json_is_negotiated_by_accept(server):
    Index.accepts.clear()
    result = cli("table", "update", "--index-url", f"{server}/index", "--json")
    assert result.returncode == 0, result.stderr
    assert "application/vnd.pypi.simple.v1+json" in Index.accepts[-1]
    report = json.loads(result.stdout)
    assert report["sha256"] == hashlib.sha256(json_page(FILES)).hexdigest()  # the JSON form was read
    assert report["releases"] == ["2.16"] and "2.16 cu136" in report["inferred"]


def test_dry_run_writes_nothing_and_clear_removes_the_overlay(server):
    result = cli("table", "update", "--index-url", f"{server}/html", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "add PyTorch 2.16" in result.stdout and not overlay_file().exists()
    assert cli("table", "update", "--index-url", f"{server}/html").returncode == 0
    again = json.loads(cli("table", "update", "--index-url", f"{server}/html", "--dry-run", "--json").stdout)
    assert again["changes"] and again["new_changes"] == []  # nothing new over the overlay already there
    cleared = cli("table", "update", "--clear", "--json")
    assert cleared.returncode == 0 and json.loads(cleared.stdout) == {"overlay_path": str(overlay_file()), "removed": True}
    assert not overlay_file().exists()
    assert cli("table", "--torch", "2.16").returncode == 2
    assert json.loads(cli("table", "update", "--clear", "--json").stdout)["removed"] is False


def test_an_index_with_nothing_new_adds_nothing(server):
    result = cli("table", "update", "--index-url", f"{server}/html-only-known", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["changes"] == []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    "where,words",
    [
        ("missing", "HTTP 404"),
        ("error", "HTTP 500"),
        ("not-index", "not a PEP 503 project page"),
        ("not-index-json", "not a PEP 691 project page"),
        ("plain", "text/plain, not an index page"),
        ("broken-json", "not valid JSON"),
        ("truncated", "cut short"),
        ("refused", "cannot connect"),
    ],
)
def test_failures_exit_2_in_one_line_and_keep_the_previous_overlay(server, where, words):
    assert cli("table", "update", "--index-url", f"{server}/html").returncode == 0
    before = overlay_file().read_bytes()
    url = f"http://127.0.0.1:{_free_port()}" if where == "refused" else f"{server}/{where}"
    result = cli("table", "update", "--index-url", url, "--timeout", "5")
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "previous overlay is unchanged" in lines[0], lines
    assert "Traceback" not in result.stderr
    assert overlay_file().read_bytes() == before
    assert json.loads(cli("table", "--torch", "2.16", "--json").stdout)["version"] == "2.16"


def test_the_timeout_bounds_the_whole_download(server):
    # The slow server answers at once and then trickles a byte every 0.3 s: each read is quick, only a
    # deadline over the whole call can stop it. The page would take minutes; --timeout 1 ends it.
    started = time.monotonic()
    result = cli("table", "update", "--index-url", f"{server}/slow", "--timeout", "1")
    assert result.returncode == 2 and "within 1 s (--timeout)" in result.stderr
    assert time.monotonic() - started < 30  # generous: interpreter start-up on a loaded machine
    assert not overlay_file().exists()


def test_a_corrupt_overlay_is_ignored_with_one_warning_line():
    overlay_file().parent.mkdir(parents=True, exist_ok=True)
    overlay_file().write_text("{not json")
    result = cli("table")
    assert result.returncode == 0 and "table update --clear" in result.stderr and "ignored" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# --- the pure parts ---------------------------------------------------------------------------------


def test_wheel_names_are_parsed_by_packaging():
    wheels = torch_wheels(FILES)
    assert {(w.version, w.variant, w.platform) for w in wheels if w.release == "2.16" and w.variant == "cu136"} == {
        ("2.16.1", "cu136", "linux-x86_64")
    }
    assert all(w.platform is not None for w in wheels if w.variant)  # the macOS wheel has no platform here
    assert not any(w.filename.startswith("torchvision") for w in wheels)
    assert set(page_filenames(html_page(FILES), "text/html")) == {f for f in FILES if f.endswith(".whl")}
    assert page_filenames(json_page(FILES), "application/vnd.pypi.simple.v1+json") == FILES
    with pytest.raises(IndexPageError):
        page_filenames(html_page(FILES)[:-30], "text/html")


def test_inference_prefers_the_same_cuda_then_the_nearest_lower_of_the_major():
    releases = SHIPPED["pytorch_releases"]
    assert infer_from(releases, "2.16", "13.0")[1] == "2.14 cu130"  # 2.15's cu130 is unverified: skipped
    assert infer_from(releases, "2.16", "12.6")[1] == "2.14 cu126"
    assert infer_from(releases, "2.16", "13.6")[1] == "2.15 cu132"
    assert infer_from(releases, "2.16", "14.0") is None  # no 14.x anywhere: nothing to infer from


def test_progress_is_shown_on_a_terminal_only(server):
    # Piped (every other test here): stderr stays empty. On a terminal a progress line appears.
    import os
    import pty

    master, slave = pty.openpty()
    proc = start_cli("table", "update", "--index-url", f"{server}/html", stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert proc.wait(timeout=60) == 0
    assert b"downloading the index:" in seen and b"KiB" in seen


def test_without_an_overlay_check_does_not_import_the_index_reader():
    """The index reader (html.parser, packaging's wheel-name parser) is `table update`'s; a plain
    command with no overlay in the cache must not pay its import at start-up."""
    code = (
        "import sys; from cudadoctor.cli import main\n"
        "try:\n    main(['check', '--json', '--driver', '580.65.06', '--gpu', 'H100'])\n"
        "except SystemExit:\n    pass\n"
        "bad = [m for m in ('html.parser', 'packaging.tags', 'cudadoctor.compat.wheel_index') if m in sys.modules]\n"
        "sys.stderr.write(repr(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stderr.strip().endswith("[]"), result.stderr


def test_an_update_keeps_what_table_learn_read_from_wheels(server, tmp_path):
    from test_table_learn import torch_wheel

    assert cli("table", "learn", str(torch_wheel(tmp_path))).returncode == 0
    assert cli("table", "update", "--index-url", f"{server}/html").returncode == 0
    overlay = json.loads(overlay_file().read_text())
    assert [(e["release"], e["variant"]) for e in overlay["learned"]] == [("2.15", "cu130")]
    cu130 = next(v for v in json.loads(cli("table", "--torch", "2.15", "--json").stdout)["variants"] if v["name"] == "cu130")
    assert cu130["evidence"] == "binary"
