"""Median wall time and peak memory of `cudadoctor check --json` on an 8-GPU stand-in host.

The host is the stand-in libnvidia-ml.so.1 that the tests compile (tests/nvml_stub.py) with
eight A100s, so the real nvidia-ml-py code path runs. Each run is a fresh process, as a user
would start it; `python -c pass` is measured beside it as the floor of any Python CLI.

    python benchmarks/bench_check.py [--runs 30]

Numbers are written down in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from nvml_stub import prepare_fake_host  # noqa: E402


def measure(argv: list[str], env: dict[str, str], runs: int) -> tuple[float, float, int]:
    """(median seconds, median peak RSS MiB, last exit status) over `runs` fresh processes."""
    times, peaks, status = [], [], 0
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        _, raw_status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - start)
        peaks.append(usage.ru_maxrss / 1024)  # Linux reports KiB
        status = os.waitstatus_to_exitcode(raw_status)
        proc.returncode = status
    return statistics.median(times), statistics.median(peaks), status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, **prepare_fake_host(Path(work))}
        env.pop("CUDADOCTOR_TABLE", None)
        # An installed package has its bytecode cached; let the warm-up runs write it here too.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # The console script, as users run it (`python -m` would add runpy's start-up on top).
        script = Path(sys.executable).with_name("cudadoctor")
        if not script.exists():
            sys.exit(f"no console script at {script}: install the project first (pip install -e .)")
        exe = [str(script)]
        cases = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("cudadoctor check --json (8 GPUs)", exe + ["check", "--json"]),
            ("cudadoctor check (text, 8 GPUs)", exe + ["check"]),
            ("cudadoctor recommend --image --format tag", exe + ["recommend", "--image", "--format", "tag"]),
            ("python -m cudadoctor check --json", [sys.executable, "-m", "cudadoctor", "check", "--json"]),
        ]
        measure(cases[1][1], env, 3)  # warm the page cache and .pyc files
        print(f"{'command':45} {'median ms':>10} {'peak MiB':>9} {'exit':>5}   ({args.runs} runs, {os.cpu_count()} CPUs)")
        for label, argv in cases:
            seconds, peak, status = measure(argv, env, args.runs)
            print(f"{label:45} {seconds * 1000:10.1f} {peak:9.1f} {status:5d}")


if __name__ == "__main__":
    main()
