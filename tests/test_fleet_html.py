"""`fleet --format html`: one self-contained page (nothing fetched, no script), the answer first,
then the coverage matrix, the upgrade plan, the chart and every group; hostile node names and
labels are escaped; 10 000 nodes make a page of a few hundred KiB. Loaded in a real headless
Chromium with the network blocked: the DOM is checked and a screenshot taken at phone width."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Optional

import pytest

from fleet_nodes import gfd_labels, mixed_cluster, node, node_list
from helpers import HOSTS, invoke

HOSTILE_NAME = '<script>alert("x")</script>'
HOSTILE_QUOTES = "a\"b'c&d\x1b[31m"
HOSTILE_PRODUCT = "<img src=x onerror=alert(1)>\"q'"


def page(*args: str) -> str:
    run = invoke("fleet", *args, "--format", "html")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.startswith("<!DOCTYPE html>") and run.stdout.rstrip().endswith("</html>")
    return run.stdout


def hostile_cluster(tmp_path: Path) -> str:
    labels = gfd_labels("H100", "550.127.05", 8)
    labels["nvidia.com/gpu.product"] = HOSTILE_PRODUCT
    nodes = [node(HOSTILE_NAME, gfd_labels("T4", "525.147.05", 1)), node(HOSTILE_QUOTES, labels),
             node("k80-0", gfd_labels("K80", "470.256.02", 4))]
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(node_list(nodes)))
    return str(path)


class Tags(HTMLParser):
    """Every start tag with its attributes, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, Optional[str]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(text: str) -> list[tuple[str, dict[str, Optional[str]]]]:
    parser = Tags()
    parser.feed(text)
    return parser.tags


def test_the_page_loads_nothing_and_runs_no_script():
    text = page(str(HOSTS))
    found = tags(text)
    assert not [t for t, _ in found if t in ("script", "link", "img", "iframe", "object", "embed", "base")]
    assert not [(t, a) for t, a in found if {"src", "href", "srcset", "action"} & set(a) or any(k.startswith("on") for k in a)]
    assert "url(" not in text and "@import" not in text and "http://" not in text and "https://" not in text
    assert "@media (max-width: 600px)" in text and "@media print" in text


def test_hostile_node_names_and_labels_are_text_not_markup(tmp_path: Path):
    text = page(hostile_cluster(tmp_path))
    names = [t for t, _ in tags(text)]
    assert "script" not in names and "img" not in names
    assert not [a for _, a in tags(text) if any(k.startswith("on") for k in a)]
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text
    assert "a&quot;b&#x27;c&amp;d\\x1b[31m" in text  # the control character is shown escaped, the quotes as entities
    assert "\x1b" not in text


def test_the_answer_comes_first_then_matrix_plan_chart_and_groups():
    text = page(str(HOSTS))
    order = [text.index(marker) for marker in
             ('id="answer"', 'id="matrix"', "Upgrade plan for PyTorch 2.15", 'id="branch-chart"', 'id="group-1"')]
    assert order == sorted(order)
    assert text.count('class="group"') == 12
    assert "R580: driver &gt;= 580.65.06" in text


def test_ten_thousand_nodes_make_a_page_of_the_same_shape(tmp_path: Path):
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(mixed_cluster(per_pool=910, cpu_nodes=0)))
    text = page(str(path))
    assert "10010 hosts in 11 groups" in text
    assert len(text.encode()) < 2 * 1024 * 1024
    assert text.count("and 902 more") >= 11  # each group shows a few names and counts the rest


# --- in a real browser -----------------------------------------------------------------------------


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed, and CI=true: .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium); CI installs it")
    return found


def browser(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium offline: every host name resolves to nothing and the proxy points nowhere."""
    argv = [
        chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
        '--host-resolver-rules=MAP * ~NOTFOUND', "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={profile}", *extra, url,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(profile)})


def test_chromium_renders_the_page_offline(tmp_path: Path):
    html_path = tmp_path / "fleet.html"
    html_path.write_text(page(hostile_cluster(tmp_path)), encoding="utf-8")
    hostile_matrix = invoke("fleet", hostile_cluster(tmp_path), "--matrix", "--json").json()["matrix"]

    dom = browser(html_path.as_uri(), tmp_path / "profile-dom", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout
    answer = re.search(r'<section class="answer[^"]*" id="answer">(.*?)</section>', text, re.S)
    assert answer and "Every host:" in answer.group(1) and "Most hosts:" in answer.group(1)
    rows = re.findall(r"<tr><th>([0-9.]+)</th>", text)
    assert rows == [r["torch"] for r in hostile_matrix["releases"]]
    for i in range(len(hostile_matrix["groups"])):
        assert f'id="group-{i + 1}"' in text
    # Parsed by the browser, the hostile name is text: no script element came of it.
    assert "<script" not in text and "&lt;script&gt;" in text

    shot = tmp_path / "phone.png"
    run = browser(html_path.as_uri(), tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=390,1600",
                  "--hide-scrollbars")
    assert run.returncode == 0, run.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert (width, height) == (390, 1600)


def test_a_long_node_name_wraps_instead_of_widening_the_page(tmp_path: Path):
    """A node name may be 253 characters with no space (a DNS subdomain): at phone width it wraps
    and the page does not scroll sideways (only the matrix does, inside its own box). Measured in
    Chromium on a copy of the page with a script added (the page itself forbids scripts)."""
    long_name = ".".join(["n" * 63] * 4)[:253]
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(node_list([node(long_name, gfd_labels("H100", "535.216.01", 8)),
                                          node("short", gfd_labels("K80", "470.256.02", 4))])))
    text = page(str(path))
    assert long_name in text
    measure = ('<script>document.body.setAttribute("data-overflow", '
               'String(document.documentElement.scrollWidth - window.innerWidth))</script></body>')
    probe = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text).replace("</body>", measure)
    html_path = tmp_path / "measure.html"
    html_path.write_text(probe, encoding="utf-8")
    dom = browser(html_path.as_uri(), tmp_path / "profile", "--dump-dom", "--window-size=390,1600")
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'data-overflow="(-?\d+)"', dom.stdout)
    assert found and int(found.group(1)) <= 0, found and found.group(1)
