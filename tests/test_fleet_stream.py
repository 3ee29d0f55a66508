"""A fleet source is read as it streams (fleet.sources.decode_hosts): the same hosts, problems and
errors as parsing the whole document, from any split of its bytes; a node list larger than any
one-document cap is judged, with each node's memory its own; bad JSON is one line, exit 2."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from cudadoctor.fleet.sources import MAX_VALUE_CHARS, FleetHost, SourceError, SourceProblem, decode_hosts, hosts_in
from fleet_nodes import gfd_labels, mixed_cluster, node, node_list
from helpers import HOSTS, run_cli


class Trickle(io.RawIOBase):
    """A byte stream that hands out at most ``step`` bytes a read, as a slow pipe does."""

    def __init__(self, data: bytes, step: int) -> None:
        self._data, self._pos, self._step = data, 0, step

    def readable(self) -> bool:
        return True

    def read1(self, size: int = -1) -> bytes:
        chunk = self._data[self._pos : self._pos + min(self._step, size if size > 0 else self._step)]
        self._pos += len(chunk)
        return chunk

    def read(self, size: int = -1) -> bytes:
        return self.read1(size)


def _shown(items: Any) -> list[Any]:
    return [(i.name, i.source, i.origin, i.facts) if isinstance(i, FleetHost) else ("problem", i.source, i.error) for i in items]


def _documents() -> list[tuple[str, bytes]]:
    cluster = mixed_cluster(per_pool=2)
    cluster["items"].append({"kind": "Node", "metadata": {}})  # a bad node: one problem, the rest still count
    return [
        ("kubectl order (items before kind)", json.dumps(cluster, indent=1, sort_keys=True).encode()),
        ("kind first, minified", json.dumps(cluster, separators=(",", ":")).encode()),
        ("a single Node", json.dumps(node("n1", gfd_labels("T4", "550.127.05", 1))).encode()),
        ("a host snapshot", (HOSTS / "h100-550.json").read_bytes()),
        ("an empty list", b'{"kind": "List", "items": []}'),
    ]


@pytest.mark.parametrize("step", [1, 7, 4096, 1 << 30])
def test_streamed_hosts_are_the_parsed_documents_hosts_in_any_split(step: int) -> None:
    for label, data in _documents():
        expected = _shown(hosts_in(json.loads(data), "src.json", "src"))
        assert _shown(decode_hosts(Trickle(data, step), "src.json", "src")) == expected, label
        assert _shown(decode_hosts(data, "src.json", "src")) == expected, label


def test_a_document_that_is_not_a_node_list_keeps_its_own_verdict() -> None:
    data = b'{"items": [1, 2], "kind": "Pod"}'
    with pytest.raises(SourceError) as streamed:
        list(decode_hosts(data, "pod.json", "pod"))
    with pytest.raises(SourceError) as parsed:
        list(hosts_in(json.loads(data), "pod.json", "pod"))
    assert str(streamed.value) == str(parsed.value)


@pytest.mark.parametrize(
    "data, words",
    [
        (b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}}', "not valid JSON"),
        (b'{"kind": "List", "items": [{"kind": "Node"}] } trailing', "not valid JSON (line 1, column 48)"),
        (b'{"kind": "List", "items": [' + b'{"n": ' + b"9" * 5000 + b"}]}", "number too long"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"kind": "List", "items": ["\xff"]}', "not UTF-8"),
        (b"", "not valid JSON"),
    ],
)
def test_bad_json_is_one_source_error(data: bytes, words: str) -> None:
    with pytest.raises(SourceError) as caught:
        list(decode_hosts(Trickle(data, 3), "nodes.json", "nodes"))
    assert str(caught.value).startswith("nodes.json: ") and words in str(caught.value), caught.value


def test_a_node_list_with_a_5000_digit_integer_is_one_line_exit_2(tmp_path: Path) -> None:
    doc = node_list([node("a", gfd_labels("T4", "550.127.05", 1))])
    text = json.dumps(doc).replace('"resourceVersion": "48213377"', '"resourceVersion": ' + "7" * 5000)
    path = tmp_path / "nodes.json"
    path.write_text(text)
    run = run_cli("fleet", "--json", str(path))
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "number too long" in lines[0] and "Traceback" not in run.stderr, lines


def test_a_node_list_larger_than_one_value_may_be_is_judged(tmp_path: Path) -> None:
    # Each node carries a large annotation (as real nodes carry image lists): the list is larger than
    # one value may be (MAX_VALUE_CHARS), every node is well under it.
    padding = "x" * (1 << 20)
    path = tmp_path / "nodes.json"
    count = MAX_VALUE_CHARS // len(padding) + 8
    with path.open("w") as handle:
        handle.write('{"apiVersion": "v1", "items": [')
        for i in range(count):
            item = node(f"gpu-{i}", gfd_labels("H100", "550.127.05", 8))
            item["metadata"]["annotations"]["example.com/padding"] = padding
            handle.write(("," if i else "") + json.dumps(item))
        handle.write('], "kind": "List"}')
    assert path.stat().st_size > MAX_VALUE_CHARS
    run = run_cli("fleet", "--json", str(path), timeout=600)
    assert run.returncode in (0, 1), run.stderr
    report = json.loads(run.stdout)
    assert report["hosts"] == count and len(report["groups"]) == 1


def test_one_node_larger_than_a_value_may_be_is_refused_in_one_line() -> None:
    big = b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a", "x": "' + b"y" * (MAX_VALUE_CHARS + 10)
    with pytest.raises(SourceError) as caught:
        list(decode_hosts(Trickle(big + b'"}}]}', 1 << 20), "nodes.json", "nodes"))
    assert "too large" in str(caught.value)


def test_problems_inside_a_streamed_list_are_kept_in_order() -> None:
    doc = node_list([node("a", gfd_labels("T4", "550.127.05", 1)), {"kind": "Pod"}, node("b", gfd_labels("T4", "550.127.05", 1))])
    items = list(decode_hosts(json.dumps(doc).encode(), "n.json", "n"))
    assert [type(i) for i in items] == [FleetHost, SourceProblem, FleetHost]


@pytest.mark.parametrize("labels", [{"app": 1}, {"nvidia.com/gpu.count": None}, {"nvidia.com/gpu.count": ["8"]}])
def test_a_node_whose_labels_are_not_all_strings_is_a_problem_of_its_own(labels: dict[str, Any]) -> None:
    bad = node("bad", gfd_labels("T4", "550.127.05", 1))
    bad["metadata"]["labels"].update(labels)
    doc = node_list([node("a", gfd_labels("T4", "550.127.05", 1)), bad])
    items = list(decode_hosts(json.dumps(doc).encode(), "n.json", "n"))
    assert isinstance(items[0], FleetHost) and isinstance(items[1], SourceProblem)
    assert "node bad: metadata.labels is not a map of strings" in items[1].error


def _whole_read_documents() -> list[tuple[str, bytes]]:
    """Node lists the whole-file reader (msgspec, field by field) takes, and ones it must hand to
    the streaming decoder (a bad node, a label that is not text, a digit run json may refuse)."""
    clean = mixed_cluster(per_pool=2)
    mixed_mig = node_list([node("m1", {**gfd_labels("A100", "550.127.05", 1), "nvidia.com/mig.strategy": "mixed",
                                       "nvidia.com/mig-1g.5gb.count": "7", "nvidia.com/mig-1g.5gb.memory": "4864"})])
    by_node_info = node("arm", gfd_labels("H100", "570.133.20", 4), arch="arm64")
    for key in ("kubernetes.io/arch", "beta.kubernetes.io/arch", "kubernetes.io/os", "beta.kubernetes.io/os"):
        del by_node_info["metadata"]["labels"][key]
    no_status = node_list([{"kind": "Node", "metadata": {"name": "bare", "labels": gfd_labels("T4", "535.216.01", 1)}}])
    not_text = node_list([node("a", gfd_labels("T4", "550.127.05", 1))])
    not_text["items"][0]["metadata"]["labels"]["nvidia.com/gpu.count"] = 1
    digits_in_text = node_list([node("a", gfd_labels("L40S", "550.127.05", 2))])
    digits_in_text["items"][0]["metadata"]["annotations"]["example.com/serial"] = "7" * 5000
    return [
        *_documents(),
        ("a clean cluster, kubectl's order", json.dumps(clean, indent=1, sort_keys=True).encode()),
        ("a clean cluster as a NodeList, minified", json.dumps({**clean, "kind": "NodeList"}, separators=(",", ":")).encode()),
        ("MIG devices of the mixed strategy", json.dumps(mixed_mig).encode()),
        ("a node without status", json.dumps(no_status).encode()),
        ("a platform from status.nodeInfo only", json.dumps(node_list([by_node_info])).encode()),
        ("a label that is a number", json.dumps(not_text).encode()),
        ("labels of null", json.dumps(node_list([{"kind": "Node", "metadata": {"name": "n", "labels": None}}])).encode()),
        ("a 5000-digit run inside a string", json.dumps(digits_in_text).encode()),
        ("a later items member wins", b'{"kind": "List", "items": [], "items": ' + json.dumps(clean["items"][:2]).encode() + b"}"),
    ]


@pytest.mark.parametrize("label, data", _whole_read_documents(), ids=[label for label, _ in _whole_read_documents()])
def test_a_document_given_whole_gives_the_hosts_of_the_parsed_document(tmp_path: Path, label: str, data: bytes) -> None:
    # Given as bytes (the CLI reads a file of at most WHOLE_LIST_BYTES whole), a node list is decoded
    # field by field; from a file handle it streams.
    path = tmp_path / "nodes.json"
    path.write_bytes(data)
    expected = _shown(hosts_in(json.loads(data), "nodes.json", "nodes"))
    with path.open("rb") as handle:
        streamed = _shown(decode_hosts(handle, "nodes.json", "nodes"))
    assert _shown(decode_hosts(data, "nodes.json", "nodes")) == expected == streamed


@pytest.mark.parametrize(
    "data, words",
    [
        (b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a"}}', "not valid JSON (line 1, column 71)"),
        (b'{"kind": "List", "items": [{"kind": "Node"}] } trailing', "not valid JSON (line 1, column 48)"),
        (b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a", "labels": {}}, "n": ' + b"9" * 5000 + b"}]}",
         "number too long"),
        (b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a", "labels": {}}, "n": NaN}]}', ""),
        (b'{"kind": "List", "items": ["\xff"]}', "not UTF-8"),
        # bytes that are not UTF-8 where no host reads (msgspec skips such strings unchecked)
        (b'{"kind": "List", "x": "\xff", "items": [{"kind": "Node", "metadata": {"name": "a", "labels": {}}}]}', "not UTF-8"),
        (b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a", "labels": {}}, "\xc0\xaf": 1}]}', "not UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "a", "labels": {}}, "deep": '
         + b"[" * 3000 + b"]" * 3000 + b"}]}", ""),
        # more than one window: given whole, it is still read node by node, as a file streams
        (b'{"kind": "Foo", "items": [' + b",".join([b'{"pad": "' + b"x" * 100_000 + b'"}'] * 70) + b"]}",
         "an items array of more than 64 entries"),
    ],
)
def test_a_bad_document_given_whole_is_the_streaming_decoders_error(data: bytes, words: str) -> None:
    try:
        streamed: Any = _shown(decode_hosts(Trickle(data, 4096), "nodes.json", "nodes"))
    except SourceError as exc:
        streamed = str(exc)
    try:
        whole: Any = _shown(decode_hosts(data, "nodes.json", "nodes"))
    except SourceError as exc:
        whole = str(exc)
    assert whole == streamed and words in str(whole)


def test_a_deeply_nested_file_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 100_000)
    run = run_cli("fleet", "--json", str(path))
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "nested too deeply" in lines[0] and "Traceback" not in run.stderr, lines


# --- reading a source file: its bytes when small, a stream when large --------------------------


def test_a_file_within_the_bound_is_its_bytes_and_a_larger_one_a_stream_from_its_start(tmp_path: Path) -> None:
    from cudadoctor.app.loader import read_user_bytes

    path = tmp_path / "a.json"
    path.write_bytes(b"0123456789")
    assert read_user_bytes(str(path), "fleet source", SourceError, 10) == b"0123456789"
    stream = read_user_bytes(str(path), "fleet source", SourceError, 9)
    assert not isinstance(stream, bytes)
    with stream:
        assert stream.read() == b"0123456789"


@pytest.mark.parametrize(("limit", "whole"), [(10, True), (9, False)])
def test_a_file_that_grew_since_its_size_was_read_is_read_to_its_end_or_streamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int, whole: bool
) -> None:
    import os

    from cudadoctor.app import loader

    path = tmp_path / "a.json"
    path.write_bytes(b"0123456789")
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> Any:  # the size as it was before the file grew to 10 bytes
        info = real_fstat(fd)
        return os.stat_result((*info[:6], 3, *info[7:10]))

    monkeypatch.setattr(loader.os, "fstat", stale_fstat)
    got = loader.read_user_bytes(str(path), "fleet source", SourceError, limit)
    if whole:
        assert got == b"0123456789"
    else:
        assert not isinstance(got, bytes)
        with got:
            assert got.read() == b"0123456789"


def test_a_fifo_in_a_directory_of_snapshots_is_one_problem_and_never_waited_on(tmp_path: Path) -> None:
    import os

    (tmp_path / "a.json").write_bytes((HOSTS / "h100-550.json").read_bytes())
    os.mkfifo(tmp_path / "b.json")  # no writer: a blocking open would wait forever
    result = run_cli("fleet", "--json", str(tmp_path))
    assert f"fleet source {tmp_path / 'b.json'}: not a regular file" in result.stderr
    assert json.loads(result.stdout)["hosts"] == 1


@pytest.mark.parametrize("slash", ["", "/"])
def test_the_json_files_under_a_directory_are_named_as_os_path_join_names_them_sorted(tmp_path: Path, slash: str) -> None:
    import os

    from cudadoctor.app.loader import json_files_under

    for name in ("b/2.json", "b/1.json", "a.json", "a/z.json", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    top = str(tmp_path) + slash
    found, problems = json_files_under(top)
    assert found == [os.path.join(top, "a.json"), os.path.join(top, "a", "z.json"),
                     os.path.join(top, "b", "1.json"), os.path.join(top, "b", "2.json")]
    assert problems == []


def test_a_snapshot_nested_deeper_than_its_key_encodes_is_one_source_error() -> None:
    from cudadoctor.fleet.sources import SnapshotCache, snapshot_host

    data = json.loads((HOSTS / "h100-550.json").read_text())
    deep: list[Any] = []
    for _ in range(5000):
        deep = [deep]
    data["host"]["extra"] = deep
    with pytest.raises(SourceError, match="nested too deeply"):
        snapshot_host(data, "deep.json", "deep", SnapshotCache())


def test_a_source_file_on_a_file_system_that_honours_non_blocking_is_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from cudadoctor.app import loader

    path = tmp_path / "a.json"
    path.write_bytes(b"0123456789")
    real_read, refused = os.read, []

    def read_once_refused(fd: int, size: int) -> bytes:
        if not refused:
            refused.append(fd)
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return real_read(fd, size)

    monkeypatch.setattr(loader.os, "read", read_once_refused)
    assert loader.read_user_bytes(str(path), "fleet source", SourceError, 100) == b"0123456789" and refused
