"""`table update` and `table learn URL` against loopback servers that trickle, redirect, lie and
overflow; and the index's trust rules: https only (loopback or --allow-http aside), redirects by
hand, an overlay that never changes a shipped release, credentials never shown, a malformed or
symlinked overlay. Every case is a fresh `python -m cudadoctor` whose own time limit (run_cli's)
is the guard against a hang: a case that is not bounded fails by running past it."""

from __future__ import annotations

import base64
import json
import os
import zlib
from pathlib import Path
from typing import Iterator

import pytest

from helpers import Run, run_cli
from loopback_http import LoopbackServer, Request, answer, endless, gzip_bomb, redirect, trickle
from test_table_update import FILES, html_page, wheel

PAGE = html_page(FILES)


def _page(request: Request, out: object) -> None:
    answer(out, 200, PAGE, "text/html")  # type: ignore[arg-type]


def _status_trickle() -> Iterator[bytes]:
    yield from (bytes([b]) for b in b"HTTP/1.1 200 OK\r\n")
    yield from endless(b"X")  # a status line that never ends


def _header_trickle() -> Iterator[bytes]:
    yield b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
    yield from endless(b"X-Slow: 1\r\n")  # headers that never end, one every 0.2 s


def _body_trickle() -> Iterator[bytes]:
    yield b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n<html>"
    yield from endless(b"<a href='x'>x</a>")


def _huge(request: Request, out: object) -> None:
    out.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n")  # type: ignore[attr-defined]
    block = b"<a href='/torch-0.0.0.tar.gz'>x</a>\n" * 30000
    for _ in range(40 * 1024 * 1024 // len(block)):  # 40 MiB with no Content-Length
        out.write(block)  # type: ignore[attr-defined]


BOMB = gzip_bomb(256 * 1024 * 1024)


def _slow_to_read(request: Request, out: object) -> None:
    # 30 MiB of real-looking wheel names, sent at once: fetching is quick, reading it takes seconds.
    names = [wheel(f"2.{m}.{p}", f"cu1{c}", platform) for m in range(40) for p in range(10) for c in range(10, 40)
             for platform in ("linux-x86_64", "linux-aarch64", "windows")]
    anchors = "".join(f'<a href="/whl/{n}#sha256={"0" * 64}" data-requires-python="&gt;=3.9">{n}</a><br/>\n' for n in names * 2)
    answer(out, 200, f"<html><body>{anchors}</body></html>".encode(), "text/html")  # type: ignore[arg-type]


def _bomb(request: Request, out: object) -> None:
    answer(out, 200, BOMB, "text/html", headers={"Content-Encoding": "gzip"})  # type: ignore[arg-type]


def _gzip_page(request: Request, out: object) -> None:
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    answer(out, 200, packer.compress(PAGE) + packer.flush(), "text/html", headers={"Content-Encoding": "gzip"})  # type: ignore[arg-type]


SHIPPED_CHANGES = [wheel("2.8.99", "cu128", "linux-x86_64"), wheel("2.8.0", "cu132", "linux-x86_64"),
                   wheel("1.99.0", "cu130", "linux-x86_64"), "torch-2.17." + "9" * 5000 + "+cu130-cp311-cp311-manylinux_2_28_x86_64.whl"]


@pytest.fixture(scope="module")
def index() -> Iterator[LoopbackServer]:
    server = LoopbackServer({})
    base = server.url
    server.routes.update({
        "/ok/torch/": _page,
        "/gz/torch/": _gzip_page,
        "/moved/torch/": redirect("/ok/torch/", 301),
        "/loop/torch/": redirect("/loop2/torch/"),
        "/loop2/torch/": redirect(f"{base}/loop/torch/"),
        "/ftp/torch/": redirect("ftp://127.0.0.1/pub/torch/"),
        "/file/torch/": redirect("file:///etc/passwd"),
        "/elsewhere/torch/": redirect(f"http://localhost:{server.server_address[1]}/ok/torch/"),
        "/status/torch/": trickle(_status_trickle, 0.2),
        "/headers/torch/": trickle(_header_trickle, 0.2),
        "/body/torch/": trickle(_body_trickle, 0.2),
        "/superscript/torch/": lambda r, o: answer(o, 200, PAGE, "text/html", length="²"),
        "/long-length/torch/": lambda r, o: answer(o, 200, PAGE, "text/html", length="9" * 5000),
        "/over-cap/torch/": lambda r, o: answer(o, 200, b"", "text/html", length=str(10**12)),
        "/huge/torch/": _huge,
        "/slow-to-read/torch/": _slow_to_read,
        "/bomb/torch/": _bomb,
        "/shipped/torch/": lambda r, o: answer(o, 200, html_page(FILES + SHIPPED_CHANGES), "text/html"),
        "/auth/torch/": lambda r, o: (answer(o, 200, PAGE, "text/html") if r.headers.get("authorization")
                                      == "Basic " + base64.b64encode(b"alice:s3cret-pw").decode()
                                      else answer(o, 401, b"", "text/plain")),
    })
    yield server
    server.stop()


def update(*args: str) -> Run:
    return run_cli("table", "update", *args, timeout=90)


def overlay_file() -> Path:
    return Path(os.environ["CUDADOCTOR_CACHE"]) / "table-overlay.json"


def one_line_error(result: Run, *words: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, lines
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# --- every deadline is a deadline ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["status", "headers", "body"])
def test_a_trickled_status_line_header_or_body_is_bounded_by_the_timeout(index, where):
    # Each piece arrives well within any per-read timeout, and none of them ever ends: only one
    # deadline over the whole exchange stops it (run_cli's own limit fails the test otherwise).
    one_line_error(update("--index-url", f"{index.url}/{where}", "--timeout", "1.5"), "within 1.5 s (--timeout)",
                   "previous overlay is unchanged")
    assert not overlay_file().exists()


def test_reading_the_page_is_within_the_deadline_too(index):
    # The page arrives at once but takes seconds to read: the deadline covers reading it, not only
    # the download (a --timeout 2 that ended in a finished overlay would fail here).
    one_line_error(update("--index-url", f"{index.url}/slow-to-read", "--timeout", "2"), "(--timeout)",
                   "previous overlay is unchanged")
    assert not overlay_file().exists()


def test_a_body_past_the_cap_is_refused_naming_the_cap(index):
    one_line_error(update("--index-url", f"{index.url}/huge", "--timeout", "60"), "more than 32 MiB", "at most 32 MiB")


def test_a_gzip_bomb_stops_at_the_cap_after_decompression(index):
    assert len(BOMB) < 2 * 1024 * 1024  # a small answer on the wire, 256 MiB inflated
    one_line_error(update("--index-url", f"{index.url}/bomb", "--timeout", "60"), "more than 32 MiB")


def test_a_gzip_page_is_read(index):
    result = update("--index-url", f"{index.url}/gz", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["releases"] == ["2.16"]


def test_a_content_length_over_the_cap_is_refused_before_reading(index):
    one_line_error(update("--index-url", f"{index.url}/over-cap"), "more than 32 MiB")


@pytest.mark.parametrize("where", ["superscript", "long-length"])
def test_a_content_length_that_is_no_ascii_number_is_one_line(index, where):
    one_line_error(update("--index-url", f"{index.url}/{where}"), "Content-Length")


def test_a_wheel_name_with_a_5000_digit_part_is_skipped(index):
    result = update("--index-url", f"{index.url}/shipped", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["releases"] == ["2.16"]


# --- redirects, by hand ----------------------------------------------------------------------------


def test_a_redirect_on_the_same_host_is_followed_and_the_final_url_recorded(index):
    result = update("--index-url", f"{index.url}/moved", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["final_url"] == f"{index.url}/ok/torch/" and report["index_url"] == f"{index.url}/moved"
    assert json.loads(overlay_file().read_text())["final_url"] == f"{index.url}/ok/torch/"


@pytest.mark.parametrize("where,words", [
    ("ftp", ("redirected to ftp://", "only https:// redirects are followed")),
    ("file", ("redirected to file://", "only https:// redirects are followed")),
    ("loop", ("redirects in a loop",)),
    ("elsewhere", ("another host (localhost)", "--allow-redirect-host localhost")),
])
def test_redirects_only_to_https_on_the_same_host_and_never_in_a_loop(index, where, words):
    one_line_error(update("--index-url", f"{index.url}/{where}"), *words)


def test_another_host_is_followed_when_allowed(index):
    result = update("--index-url", f"{index.url}/elsewhere", "--allow-redirect-host", "localhost", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["final_url"].startswith("http://localhost:")


def test_plain_http_is_refused_off_loopback_before_anything_is_sent():
    # 192.0.2.0/24 is TEST-NET-1: nothing answers there, and nothing is sent.
    one_line_error(update("--index-url", "http://192.0.2.1/whl", "--timeout", "2"), "plain http:// is refused", "--allow-http")
    one_line_error(update("--index-url", "ftp://192.0.2.1/whl"), "only https:// URLs are read")
    one_line_error(run_cli("table", "learn", "http://192.0.2.1/torch-2.15.0+cu130-cp311-cp311-manylinux_2_28_x86_64.whl"),
                   "plain http:// is refused")


def test_allow_http_lets_a_trusted_plain_index_through_the_policy():
    # With --allow-http the URL is tried: TEST-NET-1 does not answer, so the deadline ends it.
    line = one_line_error(update("--index-url", "http://192.0.2.1/whl", "--allow-http", "--timeout", "1"))
    assert "plain http:// is refused" not in line


# --- credentials -----------------------------------------------------------------------------------


def test_credentials_in_the_url_are_sent_to_its_host_and_never_shown(index):
    host = index.url.split("://", 1)[1]
    result = update("--index-url", f"http://alice:s3cret-pw@{host}/auth", "--json")
    assert result.returncode == 0, result.stderr
    assert "s3cret" not in result.stdout and "s3cret" not in overlay_file().read_text()
    assert json.loads(result.stdout)["index_url"] == f"http://***@{host}/auth"
    assert "s3cret" not in run_cli("table", "--sources", "--json").stdout
    failed = update("--index-url", f"http://alice:wrong-pw@{host}/auth")
    assert "wrong-pw" not in one_line_error(failed, "HTTP 401", "***@")


# --- the overlay never changes a shipped release ---------------------------------------------------


def test_an_index_cannot_change_a_shipped_release(index):
    before = {v: json.loads(run_cli("table", "--torch", v, "--json").stdout) for v in ("2.8", "2.14")}
    result = update("--index-url", f"{index.url}/shipped", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["releases"] == ["2.16"] and report["variants"] == []
    ignored = "\n".join(report["ignored"])
    assert "2.8.99" in ignored and "2.8 cu132" in ignored and "1.99 cu130" in ignored
    for version, view in before.items():  # no new patch, no new variant, no install command of 2.8.99
        assert json.loads(run_cli("table", "--torch", version, "--json").stdout) == view
    assert "2.8.99" not in run_cli("recommend", "--wheel", "--torch", "2.8", "--driver", "570.86.10", "--gpu", "H100").stdout
    assert run_cli("table", "--torch", "1.99").returncode == 2


def test_a_hand_written_overlay_cannot_change_a_shipped_release_either():
    overlay_file().parent.mkdir(parents=True, exist_ok=True)
    shipped = json.loads(run_cli("table", "--torch", "2.8", "--json").stdout)
    overlay_file().write_text(json.dumps({
        "format": "cudadoctor-table-overlay", "version": 1, "index_url": "https://index.invalid/whl", "fetched_at": "2026-12-01T00:00:00+00:00",
        "sha256": "0" * 64, "releases": [{"version": "2.1", "full_version": "2.1.9", "variants": []}],
        "variants": [dict(shipped["variants"][0], name="cu199", cuda="19.9", release="2.8")],
        "full_versions": {"2.8": "2.8.99"},
    }))
    result = run_cli("table", "--torch", "2.8", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == shipped


# --- a malformed or symlinked overlay --------------------------------------------------------------


@pytest.mark.parametrize("overlay", [
    {"full_versions": ["2.8.99"]},
    {"releases": "2.16"},
    {"releases": [{"version": 216, "variants": []}]},
    {"releases": [{"version": "2.99", "full_version": 7, "variants": [{"name": 1}]}]},
    {"index_url": ["x"]},
    {"variants": [{"release": ["2.99"], "name": "cu130"}]},
], ids=["full_versions-a-list", "releases-a-string", "version-a-number", "release-fields-of-wrong-types", "index_url-a-list",
        "variant-release-a-list"])
def test_a_malformed_overlay_is_ignored_with_one_warning_line(overlay, index):
    overlay_file().parent.mkdir(parents=True, exist_ok=True)
    overlay_file().write_text(json.dumps({"format": "cudadoctor-table-overlay", "version": 1, "index_url": None, "fetched_at": None,
                                          "sha256": None, "releases": [], "variants": [], "full_versions": {}, **overlay}))
    for args in (("table",), ("check", "--driver", "570.86.10", "--gpu", "H100", "--json")):
        result = run_cli(*args)
        assert result.returncode in (0, 1), result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "warning" in lines[0] and "ignored" in lines[0], lines
    repaired = update("--index-url", f"{index.url}/ok")  # table update replaces it
    assert repaired.returncode == 0, repaired.stderr
    assert run_cli("table").stderr == ""


def test_a_symlinked_overlay_is_refused_and_its_target_untouched(index, tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text("precious\n")
    overlay_file().parent.mkdir(parents=True, exist_ok=True)
    overlay_file().symlink_to(target)
    one_line_error(update("--index-url", f"{index.url}/ok"), "symbolic link")
    assert target.read_text() == "precious\n" and overlay_file().is_symlink()


# --- what the overlay adds is shown as coming from its index ---------------------------------------


def test_what_an_index_adds_is_installed_from_that_index_and_says_so(index):
    assert update("--index-url", f"{index.url}/ok").returncode == 0
    host = index.url.split("://", 1)[1]
    view = json.loads(run_cli("table", "--torch", "2.16", "--json").stdout)
    for variant in view["variants"]:  # never PyTorch's own index for wheels seen on this one
        assert variant["wheel_index_url"] == f"{index.url}/ok"
        assert variant["seen_on"].startswith(f"the wheel index {host}, read 20")
    text = run_cli("table", "--torch", "2.16").stdout
    assert f"--index-url {index.url}/ok" in text and f"not in the shipped table: from the wheel index {host}" in text
    rec = json.loads(run_cli("recommend", "--wheel", "--torch", "2.16", "--driver", "595.45.04", "--gpu", "H100",
                             "--format", "json").stdout)["recommendation"]
    assert rec["pip_command"].endswith(f"--index-url {index.url}/ok")
    assert any(f"comes from the wheel index {host}" in note for note in rec["notes"])
    shipped = json.loads(run_cli("table", "--torch", "2.15", "--json").stdout)["variants"]
    assert all(v["seen_on"] is None and f"{index.url}" not in v["wheel_index_url"] for v in shipped)
    sources = json.dumps(json.loads(run_cli("table", "--sources", "--json").stdout))
    assert f"the wheel index {host}" in sources and f"{index.url}/ok/torch/" in sources


# --- over TLS (the reader itself, in-process, with a certificate made here) -------------------------


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory) -> Iterator[tuple[str, "object"]]:
    import shutil
    import ssl
    import subprocess
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            try:
                if self.path == "/headers":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                    for _ in range(1000):
                        self.wfile.write(b"X-Slow: 1\r\n")
                        self.wfile.flush()
                        time.sleep(0.2)
                    return
                if self.path == "/down":
                    self.send_response(302)
                    self.send_header("Location", "http://127.0.0.1:1/torch/")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", "5")
                self.end_headers()
                self.wfile.write(b"hello")
            except OSError:
                pass

    class Quiet(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: object, client_address: object) -> None:
            pass

    server = Quiet(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = ssl.create_default_context(cafile=str(cert))
    yield f"https://127.0.0.1:{server.server_address[1]}", client
    server.shutdown()
    server.server_close()


def _get(url: str, seconds: float, context: object = None) -> bytes:
    import time

    from cudadoctor.probe.http_get import get

    out: list[bytes] = []
    get(url, deadline=time.monotonic() + seconds, timeout=seconds, write=out.append, max_bytes=1024, what="a test page",
        ssl_context=context)  # type: ignore[arg-type]
    return b"".join(out)


def test_tls_is_verified_and_bounded(tls_server):
    import socket

    from cudadoctor.probe.http_get import FetchError

    url, client = tls_server
    assert _get(f"{url}/page", 10, client) == b"hello"
    with pytest.raises(FetchError, match="TLS failed"):  # the system's CAs do not know this certificate
        _get(f"{url}/page", 10)
    with pytest.raises(FetchError, match=r"within 1\.5 s") as caught:  # headers trickled over TLS
        _get(f"{url}/headers", 1.5, client)
    assert caught.value.timed_out
    with pytest.raises(FetchError, match="from https:// to .*a downgrade"):
        _get(f"{url}/down", 10, client)
    mute = socket.socket()  # accepts, never speaks TLS: the handshake is under the deadline too
    mute.bind(("127.0.0.1", 0))
    mute.listen()
    try:
        with pytest.raises(FetchError, match=r"within 1 s"):
            _get(f"https://127.0.0.1:{mute.getsockname()[1]}/", 1, client)
    finally:
        mute.close()
