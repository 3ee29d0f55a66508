"""Median time to load and validate the compatibility table (target: < 10 ms).

    .venv/bin/python benchmarks/bench_table_load.py [--runs N] [--table FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time

from cudadoctor.table import default_table_path, load_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--table", default=default_table_path())
    args = parser.parse_args()
    load_table(args.table)  # warm the file cache and imports
    samples = []
    for _ in range(args.runs):
        start = time.perf_counter()
        load_table(args.table)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    print(
        f"load+validate {args.table}: median {statistics.median(samples):.2f} ms, "
        f"p90 {samples[int(len(samples) * 0.9) - 1]:.2f} ms, min {samples[0]:.2f} ms over {args.runs} runs"
    )


if __name__ == "__main__":
    main()
