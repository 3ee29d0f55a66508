"""Time to load and validate the compatibility table (target: < 10 ms).

Two numbers: *cold*, the first load in a fresh process (what every `cudadoctor` command pays),
and *warm*, repeated loads in one process (the validation work alone, caches filled).

    .venv/bin/python benchmarks/bench_table_load.py [--runs N] [--table FILE]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from cudadoctor.app.loader import default_table_path, load_table

COLD = (
    "import sys, time\n"
    "from cudadoctor.app.loader import load_table\n"
    "start = time.perf_counter()\n"
    "load_table(sys.argv[1])\n"
    "print((time.perf_counter() - start) * 1000)\n"
)


def summary(label: str, samples: list[float]) -> str:
    samples = sorted(samples)
    return (
        f"{label}: median {statistics.median(samples):.2f} ms, p90 {samples[int(len(samples) * 0.9) - 1]:.2f} ms, "
        f"min {samples[0]:.2f} ms over {len(samples)} runs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--table", default=default_table_path())
    args = parser.parse_args()
    cold = [
        float(subprocess.run([sys.executable, "-c", COLD, args.table], capture_output=True, text=True, check=True).stdout)
        for _ in range(min(args.runs, 40))
    ]
    load_table(args.table)  # warm the file cache and imports
    warm = []
    for _ in range(args.runs):
        start = time.perf_counter()
        load_table(args.table)
        warm.append((time.perf_counter() - start) * 1000)
    print(f"table {args.table}")
    print(summary("cold (first load in a fresh process)", cold))
    print(summary("warm (repeated loads in one process)", warm))


if __name__ == "__main__":
    main()
