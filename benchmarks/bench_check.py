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


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(seconds, peak RSS MiB, exit status) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    _, raw_status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(raw_status)
    return elapsed, usage.ru_maxrss / 1024, proc.returncode  # Linux reports ru_maxrss in KiB


def measure_all(cases: list[tuple[str, list[str]]], env: dict[str, str], runs: int) -> dict[str, tuple[float, float, float, int]]:
    """Per command: (median s, fastest s, median peak MiB, exit status). The commands take turns, run
    after run, so that a shared machine's drifting load falls on all of them alike; the fastest run
    is the least disturbed one."""
    samples: dict[str, list[tuple[float, float, int]]] = {label: [] for label, _ in cases}
    for _ in range(runs):
        for label, argv in cases:
            samples[label].append(run_once(argv, env))
    return {
        label: (
            statistics.median(t for t, _, _ in rows),
            min(t for t, _, _ in rows),
            statistics.median(p for _, p, _ in rows),
            rows[-1][2],
        )
        for label, rows in samples.items()
    }


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
        measure_all(cases, env, 2)  # warm the page cache and write the .pyc files
        results = measure_all(cases, env, args.runs)
        print(f"{'command':45} {'median ms':>10} {'min ms':>7} {'peak MiB':>9} {'exit':>5}   ({args.runs} runs, {os.cpu_count()} CPUs)")
        for label, (seconds, fastest, peak, status) in results.items():
            print(f"{label:45} {seconds * 1000:10.1f} {fastest * 1000:7.1f} {peak:9.1f} {status:5d}")


if __name__ == "__main__":
    main()
