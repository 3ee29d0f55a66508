"""Cost of the pure entry point, in one process: ``doctor.check(facts, table, request)`` over
snapshots already loaded, as the fleet and the Python API call it (target: well under 1 ms a
call beyond parsing the snapshot).

Each host of ``tests/hosts/`` is decoded once, then checked ``--runs`` times in turn; the script
reports per host the median and fastest time of one check, and beside it the time to decode the
snapshot's JSON text into facts (what a fleet pays per node file).

    .venv/bin/python benchmarks/bench_core.py [--runs 2000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from cudadoctor.doctor import check, resolve_request
from cudadoctor.app.loader import load_table
from cudadoctor.model.snapshot import decode_snapshot

HOSTS = Path(__file__).resolve().parent.parent / "tests" / "hosts"


def timed(fn, runs: int) -> tuple[float, float]:
    """(median, fastest) seconds of ``fn()`` over ``runs`` calls."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), min(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    table = load_table()
    request = resolve_request(table)
    texts = {path.stem: path.read_text() for path in sorted(HOSTS.glob("*.json"))}
    snapshots = {name: decode_snapshot(text) for name, text in texts.items()}
    for facts in snapshots.values():  # warm: first-use caches of the table (name index, row index)
        check(facts, table, request)
    print(f"{'host':20} {'check median µs':>16} {'min µs':>8} {'decode median µs':>17}   ({args.runs} runs)")
    medians = []
    for name, facts in snapshots.items():
        median, fastest = timed(lambda facts=facts: check(facts, table, request), args.runs)
        decode, _ = timed(lambda name=name: decode_snapshot(texts[name]), max(args.runs // 4, 1))
        medians.append(median)
        print(f"{name:20} {median * 1e6:16.1f} {fastest * 1e6:8.1f} {decode * 1e6:17.1f}")
    print(f"{'all hosts':20} {statistics.median(medians) * 1e6:16.1f}")


if __name__ == "__main__":
    main()
