"""`fleet --kubernetes` against loopback API servers that misbehave (trickle, overflow, a gzip bomb,
a continue token that repeats, ill-typed answers) and kubeconfigs that are not files one can read
(a FIFO, 80 MiB, nested past any limit); credentials never shown. Each case is a fresh
`python -m cudadoctor` whose own time limit (run_cli's) is the guard against a hang."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from fleet_nodes import mixed_cluster
from helpers import Run, run_cli
from loopback_http import LoopbackServer, answer, endless, gzip_bomb, trickle

TOKEN = "sekret-token-9f8e7d"
NODES = mixed_cluster(per_pool=1)["items"]
BOMB = gzip_bomb(512 * 1024 * 1024)


def _json(out: object, body: object, status: int = 200, headers: dict[str, str] | None = None) -> None:
    answer(out, status, json.dumps(body).encode(), "application/json", headers=headers)  # type: ignore[arg-type]


def _node_list(metadata: object, items: object = None) -> dict[str, object]:
    return {"kind": "NodeList", "apiVersion": "v1", "metadata": metadata, "items": NODES if items is None else items}


def _body_trickle() -> Iterator[bytes]:
    yield b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"items": ['
    yield from endless(b" ")


def _header_trickle() -> Iterator[bytes]:
    yield b"HTTP/1.1 200 OK\r\n"
    yield from endless(b"X-Slow: 1\r\n")


ROUTES = {
    "ok": lambda r, o: _json(o, _node_list({"resourceVersion": "1"})),
    "same-token": lambda r, o: _json(o, _node_list({"continue": "again"})),
    "metadata-list": lambda r, o: _json(o, _node_list(["continue"])),
    "metadata-string": lambda r, o: _json(o, _node_list("x")),
    "items-object": lambda r, o: _json(o, _node_list({}, {"a": 1})),
    "items-strings": lambda r, o: _json(o, _node_list({}, ["node"])),
    "huge-integer": lambda r, o: answer(o, 200, b'{"items": [], "metadata": {"x": ' + b"9" * 5000 + b"}}", "application/json"),
    "bomb": lambda r, o: answer(o, 200, BOMB, "application/json", headers={"Content-Encoding": "gzip"}),
    "body-trickle": trickle(_body_trickle, 0.2),
    "header-trickle": trickle(_header_trickle, 0.2),
    "unauthorized": lambda r, o: _json(o, {"kind": "Status", "code": 401}, 401),
}


@pytest.fixture(scope="module")
def api() -> Iterator[LoopbackServer]:
    server = LoopbackServer({f"/{name}/api/v1/nodes": route for name, route in ROUTES.items()})
    yield server
    server.stop()


def kubeconfig(path: Path, server: str) -> dict[str, str]:
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "loop",
        "clusters": [{"name": "loop", "cluster": {"server": server}}],
        "users": [{"name": "me", "user": {"token": TOKEN}}],
        "contexts": [{"name": "loop", "context": {"cluster": "loop", "user": "me"}}],
    }))
    return {"KUBECONFIG": str(path)}


def fleet(env: dict[str, str], *args: str) -> Run:
    return run_cli("fleet", "--kubernetes", "--json", *args, env=env, timeout=90)


def one_line_error(result: Run, *words: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, lines
    assert TOKEN not in result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_a_well_formed_answer_is_read(api, tmp_path):
    result = fleet(kubeconfig(tmp_path / "config", f"{api.url}/ok"))
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["hosts"] == len(NODES)
    assert api.seen[-1].headers["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("where,words", [
    ("same-token", ("same continue token twice",)),
    ("metadata-list", ("metadata is not an object",)),
    ("metadata-string", ("metadata is not an object",)),
    ("items-object", ("not a node list",)),
    ("items-strings", ("items are not all objects",)),
    ("huge-integer", ("gave no node list",)),
    ("bomb", ("more than 64 MiB",)),
])
def test_an_answer_that_is_not_a_bounded_node_list_is_one_line(api, tmp_path, where, words):
    one_line_error(fleet(kubeconfig(tmp_path / "config", f"{api.url}/{where}")), *words)


@pytest.mark.parametrize("where", ["body-trickle", "header-trickle"])
def test_a_trickled_answer_is_bounded_by_the_timeout(api, tmp_path, where):
    one_line_error(fleet(kubeconfig(tmp_path / "config", f"{api.url}/{where}"), "--timeout", "1.5"), "did not answer within 1.5s")


def test_credentials_in_the_server_url_and_the_token_are_never_shown(api, tmp_path):
    host = api.url.split("://", 1)[1]
    line = one_line_error(fleet(kubeconfig(tmp_path / "config", f"http://admin:hunter2-pw@{host}/unauthorized")), "401", "***@")
    assert "hunter2" not in line


def test_credentials_in_a_server_url_without_a_scheme_are_never_shown(api, tmp_path):
    """client-go takes a bare host:port for the server; with userinfo before it, there is no
    scheme:// for redact_url to anchor on, and the error quoted it whole."""
    host = api.url.split("://", 1)[1]
    line = one_line_error(fleet(kubeconfig(tmp_path / "config", f"admin:hunter2-pw@{host}/x")))
    assert "hunter2" not in line and "***@" in line


def test_a_kubeconfig_that_is_a_fifo_is_one_line(tmp_path):
    fifo = tmp_path / "config"
    os.mkfifo(fifo)
    one_line_error(fleet({"KUBECONFIG": str(fifo)}), "not a regular file")


def test_an_80_mib_kubeconfig_is_one_line(tmp_path):
    big = tmp_path / "config"
    with open(big, "wb") as handle:
        handle.truncate(80 * 1024 * 1024)
    one_line_error(fleet({"KUBECONFIG": str(big)}), "larger than 16 MiB")


def test_a_deeply_nested_kubeconfig_is_one_line(tmp_path):
    deep = tmp_path / "config"
    deep.write_text("clusters: " + "[" * 100000 + "]" * 100000 + "\n")
    one_line_error(fleet({"KUBECONFIG": str(deep)}), "nested too deeply")


def test_a_broken_kubeconfig_does_not_quote_its_token(tmp_path):
    broken = tmp_path / "config"
    broken.write_text(f"users:\n- name: me\n  user: {{token: {TOKEN}\n")
    one_line_error(fleet({"KUBECONFIG": str(broken)}), "not valid YAML")


@pytest.mark.parametrize(
    "url, shown",
    [
        ("https://user:pa?ss#word@api.example:6443/x", "https://***@api.example:6443/x"),
        ("https://user:secret@api.example/", "https://***@api.example/"),
        ("see https://a:b@h/x and http://h2/y@z", "see https://***@h/x and http://h2/y@z"),
        ("https://h/p?q=a@b", "https://h/p?q=a@b"),
    ],
)
def test_credentials_in_a_url_are_masked_whole_and_nothing_else(url: str, shown: str) -> None:
    from cudadoctor.model.redact import redact_url

    assert redact_url(url) == shown
