"""`cudadoctor fleet --json` at scale, as ratios to one `cudadoctor check --json` measured in the same
interleaved run (docs/performance.md, "The fleet"): the check on 8 stand-in GPUs (the stand-in
libnvidia-ml.so.1 the tests compile with gcc, tests/nvml_stub.py: the check a host runs, issue
22's "one check"), and the cheaper `check --json --snapshot` of one host's snapshot (no NVML
child), so the stricter ratio is shown beside it.

Inputs, generated under a temporary directory (never committed):
- distinct: a `kubectl get nodes -o json` list of N nodes labelled as NVIDIA's GPU Feature
  Discovery labels them, every node its own kind (GPU model, driver branch and patch, GPU count
  and memory all vary: no two are judged alike);
- few kinds: N nodes over ~40 kinds (GPU x driver) plus CPU-only nodes;
- snapshots: a directory of N host snapshot files (the realistic snapshots of tests/hosts, each
  under its own host name, probe time and GPU UUIDs, in 100 subdirectories).

Each round runs every command once, in turn, as a fresh process; a command's CPU time (user +
system, with the children it waited for: the check's NVML child) and peak memory are the child's
own (os.wait4). Per round, each fleet command's CPU time and wall time are divided by each check's
of the same round; the table shows the median ratio and its spread (lowest-highest) over the
rounds, so a busy machine moves both sides of a ratio alike. A last column divides the fleet
command's least CPU time over the rounds by the 8-GPU check's least:
on a shared machine whose neighbours inflate CPU time from round to round (caches, a sibling
thread), each least is the nearest to the work alone.

    .venv/bin/python benchmarks/bench_fleet.py [--rounds 5] [--nodes 10000]
    .venv/bin/python benchmarks/bench_fleet.py --rounds 1 --big      # + a 1 GiB node list (52 000 nodes)
    .venv/bin/python benchmarks/bench_fleet.py --rounds 1 --million  # + 1 000 000 nodes (about 3 GiB)
    PYTHONPATH=. .venv/bin/python benchmarks/bench_fleet.py --rounds 3 --against ../main  # two trees

The console script imports cudadoctor as installed, or from PYTHONPATH. ``--against TREE`` runs
every command (the check too) from a second source tree as well, PYTHONPATH=TREE, the two trees
taking turns in each round (which goes first alternates), each fleet command's ratio taken to its
own tree's check of that round.
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
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fleet_nodes import GPUS, gfd_labels, node  # noqa: E402
from nvml_stub import prepare_fake_host  # noqa: E402

DRIVERS = ["470.256.02", "525.147.05", "535.216.01", "550.127.05", "560.35.03", "570.133.20", "575.57.08",
           "580.95.05", "590.44.01", "595.45.04"]  # fmt: skip
BRANCHES = ["470", "525", "535", "550", "560", "570", "575", "580", "590", "595"]


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


def few_kind_nodes(count: int) -> Iterator[dict[str, Any]]:
    pool = kinds()
    for i in range(count):
        if i % 50 == 49:
            yield node(f"cpu-{i:05d}")
            continue
        gpu, driver, n = pool[i % len(pool)]
        yield node(f"gpu-{i:05d}", gfd_labels(gpu, driver, n))


def distinct_nodes(count: int, start: int = 0) -> Iterator[dict[str, Any]]:
    """Nodes no two of which are alike: GPU model, driver branch, minor and patch, GPU count and memory vary."""
    names = sorted(GPUS)
    for i in range(start, start + count):
        gpu = names[i % len(names)]
        branch = "470" if gpu == "K80" else BRANCHES[(i // len(names)) % len(BRANCHES)]
        driver = f"{branch}.{10 + (i // 90) % 190}.{i % 97:02d}"
        labels = gfd_labels(gpu, driver, 1 + (i // 7) % 8)
        labels["nvidia.com/gpu.memory"] = str(int(labels["nvidia.com/gpu.memory"]) - i % 64)
        yield node(f"gpu-{i:07d}", labels)


def write_node_list(path: Path, nodes: Iterator[dict[str, Any]], padding: int = 0) -> int:
    """Write a node list as kubectl prints it (keys sorted: items before kind), one node at a time;
    ``padding`` characters of annotation per node stand for what real nodes carry (image lists)."""
    count = 0
    with path.open("w") as handle:
        handle.write('{\n "apiVersion": "v1",\n "items": [\n')
        for item in nodes:
            if padding:
                item["metadata"]["annotations"]["example.com/padding"] = "x" * padding
            handle.write((",\n" if count else "") + json.dumps(item, indent=1, sort_keys=True))
            count += 1
        handle.write('\n ],\n "kind": "List",\n "metadata": {"resourceVersion": ""}\n}\n')
    return count


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


def write_inputs(work: Path, nodes: int) -> tuple[Path, Path, Path]:
    """The three inputs under ``work``: the distinct node list, the few-kinds one, the snapshot directory."""
    distinct, few, snapshots = work / "distinct.json", work / "few.json", work / "snapshots"
    write_node_list(distinct, distinct_nodes(nodes))
    write_node_list(few, few_kind_nodes(nodes))
    write_snapshots(snapshots, nodes)
    return distinct, few, snapshots


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, peak MiB) of one fresh process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv}: exit {proc.returncode}: {err.decode()[-400:]}")
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--big", action="store_true", help="also a 1 GiB node list of 52 000 nodes (each padded as real nodes are)")
    parser.add_argument("--million", action="store_true", help="also a list of 1 000 000 nodes")
    parser.add_argument("--against", metavar="TREE", help="also run every command from this source tree (PYTHONPATH=TREE), in turn with this one")
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("cudadoctor"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        distinct, few, snapshots = write_inputs(work, args.nodes)
        checks = {
            "gpus": [exe, "check", "--json"],
            "snapshot": [exe, "check", "--json", "--snapshot", str(ROOT / "tests/hosts/h100-550.json")],
        }
        commands = [
            (f"fleet --json, {args.nodes} distinct nodes", [exe, "fleet", "--json", str(distinct)]),
            (f"fleet --json, {args.nodes} nodes of ~40 kinds", [exe, "fleet", "--json", str(few)]),
            (f"fleet --json, {args.nodes} snapshot files", [exe, "fleet", "--json", str(snapshots)]),
        ]
        extra = []
        if args.big:
            big = work / "big.json"
            count = write_node_list(big, few_kind_nodes(52_000), padding=18_000)
            extra.append((f"fleet --json, {big.stat().st_size / 2**30:.2f} GiB node list ({count} nodes of ~40 kinds)", [exe, "fleet", "--json", str(big)], big))
        if args.million:
            million = work / "million.json"
            write_node_list(million, few_kind_nodes(1_000_000))
            extra.append((f"fleet --json, 1 000 000 nodes of ~40 kinds ({million.stat().st_size / 2**30:.2f} GiB)", [exe, "fleet", "--json", str(million)], million))
        # Run as an installed package runs: its bytecode (and the console script's compiled modules
        # and table) cached, here in a cache of this run's own, stored by one warm-up round.
        env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"))
        for name in ("PYTHONDONTWRITEBYTECODE", "CUDADOCTOR_CACHE", "CUDADOCTOR_TABLE", "FAKE_NVML_CONFIG"):
            env.pop(name, None)
        gpu_host = prepare_fake_host(work / "host")  # only the 8-GPU check is given it
        trees = {os.environ.get("PYTHONPATH") or "installed": env}
        if args.against:
            trees[args.against] = dict(env, PYTHONPATH=args.against, XDG_CACHE_HOME=str(work / "cache-against"))
        print(f"{args.rounds} interleaved rounds; distinct list {distinct.stat().st_size / 2**20:.1f} MiB, few-kinds list {few.stat().st_size / 2**20:.1f} MiB")

        def env_of(tree: str, label: str) -> dict[str, str]:
            return dict(trees[tree], **gpu_host) if label == "gpus" else trees[tree]

        for tree in trees:
            for label, argv in [*checks.items(), *commands]:
                run_once(argv, env_of(tree, label))
        base: dict[str, dict[str, list[tuple[float, float, float]]]] = {tree: {label: [] for label in checks} for tree in trees}
        results: dict[str, dict[str, list[tuple[float, float, float]]]] = {tree: {label: [] for label, _ in commands} for tree in trees}
        for round_number in range(args.rounds):
            # the checks and the fleet commands in an order rotated each round, so that no command
            # always follows the same one; with two trees, each goes first every other round
            order = [*checks.items(), *commands]
            shift = round_number % len(order)
            turns = list(trees)
            for tree in turns[round_number % len(turns):] + turns[: round_number % len(turns)]:
                for label, argv in order[shift:] + order[:shift]:
                    (base[tree][label] if label in checks else results[tree][label]).append(run_once(argv, env_of(tree, label)))
        for tree in trees:
            if len(trees) > 1:
                print(f"\n{tree}:")
            for label, what in (("gpus", "`check --json` on 8 stand-in GPUs"), ("snapshot", "`check --json --snapshot`")):
                runs_of = base[tree][label]
                print(f"one {what}: CPU {statistics.median(b[0] for b in runs_of) * 1000:.1f} ms, "
                      f"wall {statistics.median(b[1] for b in runs_of) * 1000:.1f} ms, peak {max(b[2] for b in runs_of):.0f} MiB (medians)")
            print("| command | CPU ratio to `check --json` (8 GPUs), median (range) | wall ratio | CPU ratio to `check --json --snapshot` "
                  "| peak MiB | least CPU / least CPU (8 GPUs) |")
            print("| --- | ---: | ---: | ---: | ---: | ---: |")
            gpus, snap = base[tree]["gpus"], base[tree]["snapshot"]
            for label, runs in results[tree].items():
                cpu = [r[0] / b[0] for r, b in zip(runs, gpus)]
                wall = [r[1] / b[1] for r, b in zip(runs, gpus)]
                cpu_snap = [r[0] / b[0] for r, b in zip(runs, snap)]
                of_least = min(r[0] for r in runs) / min(b[0] for b in gpus)
                print(f"| `{label}` | {spread(cpu)} | {spread(wall)} | {spread(cpu_snap)} | {max(r[2] for r in runs):.0f} | {of_least:.2f} |", flush=True)
        for label, argv, path in extra:
            reference = run_once(checks["gpus"], dict(env, **gpu_host))
            snapshot = run_once(checks["snapshot"], env)
            cpu, wall, peak = run_once(argv, env)
            print(f"| `{label}` | {cpu / reference[0]:.1f} (one round) | {wall / reference[1]:.1f} | {cpu / snapshot[0]:.1f} | {peak:.0f} |"
                  f"  CPU {cpu:.1f} s, wall {wall:.1f} s", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
