"""Median wall time and peak memory of `cudadoctor fleet --json` on 10 000 nodes, beside one
`cudadoctor check --json --snapshot`.

Two inputs, written to a temporary directory first:
- a `kubectl get nodes -o json` list of 10 000 Nodes labelled as NVIDIA's GPU Feature Discovery
  labels them (tests/fleet_nodes.py), over ~40 kinds of node (GPU x driver), plus CPU-only nodes;
- a directory of 10 000 host snapshot files (the realistic snapshots of tests/hosts, each under
  its own host name, probe time and GPU UUIDs, in 100 subdirectories).

Each command runs as a fresh process through the installed console script, started by the C
launcher of bench_check.py so that peak memory is the child's own.

    python benchmarks/bench_fleet.py [--runs 5] [--nodes 10000]

Numbers are written down in docs/performance.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_check import build_launcher  # noqa: E402
from fleet_nodes import GPUS, gfd_labels, node, node_list  # noqa: E402

DRIVERS = ["470.256.02", "525.147.05", "535.216.01", "550.127.05", "560.35.03", "570.133.20", "575.57.08",
           "580.95.05", "590.44.01", "595.45.04"]  # fmt: skip


def kinds() -> list[tuple[str, str, int]]:
    """~40 (GPU, driver, count) kinds: every GPU on four drivers spread over the range."""
    out = []
    for i, gpu in enumerate(GPUS):
        for j in range(4):
            driver = DRIVERS[(i + 3 * j) % len(DRIVERS)]
            if gpu == "K80" and not driver.startswith("470"):
                driver = "470.256.02"  # Kepler stops at R470
            out.append((gpu, driver, 8 if gpu in ("H100", "A100", "V100") else 4))
    return out


def write_node_list(path: Path, count: int) -> int:
    pool = kinds()
    nodes = []
    for i in range(count):
        if i % 50 == 49:
            nodes.append(node(f"cpu-{i:05d}"))
            continue
        gpu, driver, n = pool[i % len(pool)]
        nodes.append(node(f"gpu-{i:05d}", gfd_labels(gpu, driver, n)))
    path.write_text(json.dumps(node_list(nodes), indent=1))
    return len({(g, d) for g, d, _ in pool})


def write_snapshots(directory: Path, count: int) -> None:
    sources = [json.loads(p.read_text()) for p in sorted((ROOT / "tests" / "hosts").glob("*.json"))]
    for i, data in zip(range(count), itertools.cycle(sources)):
        data["host"]["hostname"] = f"host-{i:05d}"
        data["host"]["probed_at"] = f"2026-12-01T10:{i // 600 % 60:02d}:{i // 10 % 60:02d}Z"
        for gpu in data["host"]["gpus"]:  # every real GPU has its own UUID
            gpu["uuid"] = f"GPU-{i:08x}-{gpu['index']:04x}-4c1e-9a77-5d0c3f2b1a00"
        sub = directory / f"rack-{i % 100:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"host-{i:05d}.json").write_text(json.dumps(data, indent=2))


def measure(launcher: str, argv: list[str], runs: int) -> tuple[float, float, float]:
    """(median ms, min ms, peak MiB) over ``runs`` fresh processes."""
    times, peaks = [], []
    for _ in range(runs):
        read, write = os.pipe()
        started = time.perf_counter()
        proc = subprocess.run([launcher, str(write), *argv], pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append((time.perf_counter() - started) * 1000)
        os.close(write)
        with os.fdopen(read) as handle:
            peaks.append(int(handle.read().strip()) / 1024)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{argv}: exit {proc.returncode}: {proc.stderr.decode()[-400:]}")
    return statistics.median(times), min(times), max(peaks)


def breakdown(nodes: Path, snapshots: Path) -> None:
    """Where one in-process run spends its time: reading, facts, checks, rendering."""
    from cudadoctor.doctor import resolve_request
    from cudadoctor.fleet.judge import judge_fleet
    from cudadoctor.fleet.payload import fleet_payload
    from cudadoctor.fleet.sources import FleetHost, SnapshotCache, decode_source, hosts_in
    from cudadoctor.app.loader import json_files_under, load_table, read_user_file

    table = load_table()
    request = resolve_request(table)
    for label, paths in (("node list", [str(nodes)]), ("snapshot files", json_files_under(str(snapshots))[0])):
        marks = [time.perf_counter()]
        docs = [decode_source(read_user_file(p, "source", ValueError), p) for p in paths]
        marks.append(time.perf_counter())
        cache = SnapshotCache()
        hosts = [h for d, p in zip(docs, paths) for h in hosts_in(d, p, p, cache) if isinstance(h, FleetHost)]
        marks.append(time.perf_counter())
        fleet = judge_fleet(hosts, table, request)
        marks.append(time.perf_counter())
        json.dumps(fleet_payload(fleet))
        marks.append(time.perf_counter())
        parts = [f"{name} {(b - a) * 1000:.0f} ms" for name, a, b in zip(("read+parse JSON", "facts", "group+check", "JSON out"), marks, marks[1:])]
        print(f"{label}: {len(hosts)} hosts, {len(fleet.groups)} groups: " + ", ".join(parts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=10_000)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("cudadoctor"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        launcher = build_launcher(work)
        nodes = work / "nodes.json"
        n_kinds = write_node_list(nodes, args.nodes)
        snapshots = work / "snapshots"
        write_snapshots(snapshots, args.nodes)
        half = work / "half.json"
        write_node_list(half, args.nodes // 2)
        print(f"{args.nodes} nodes over {n_kinds} GPU x driver kinds; node list {nodes.stat().st_size / 2**20:.1f} MiB")
        commands = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("check --json --snapshot (one host)", [exe, "check", "--json", "--snapshot", str(ROOT / "tests/hosts/h100-550.json")]),
            (f"fleet --json, node list of {args.nodes // 2}", [exe, "fleet", "--json", str(half)]),
            (f"fleet --json, node list of {args.nodes}", [exe, "fleet", "--json", str(nodes)]),
            (f"fleet (text), node list of {args.nodes}", [exe, "fleet", str(nodes)]),
            (f"fleet --format node-affinity, {args.nodes}", [exe, "fleet", "--format", "node-affinity", str(nodes)]),
            (f"fleet --json, {args.nodes} snapshot files", [exe, "fleet", "--json", str(snapshots)]),
        ]
        breakdown(nodes, snapshots)
        print("| command | median ms | min ms | peak MiB |\n| --- | ---: | ---: | ---: |")
        for label, argv in commands:
            median, fastest, peak = measure(launcher, argv, args.runs)
            print(f"| `{label}` | {median:.0f} | {fastest:.0f} | {peak:.1f} |", flush=True)


if __name__ == "__main__":
    main()
