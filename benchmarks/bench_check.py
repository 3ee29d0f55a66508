"""Median wall time and peak memory of `cudadoctor check --json` on an 8-GPU stand-in host.

The host is the stand-in libnvidia-ml.so.1 that the tests compile (tests/nvml_stub.py) with
eight GPUs, so the real nvidia-ml-py code path runs. Each run is a fresh process, as a user
would start it. Two floors are measured beside it in the same run: `python -c pass` (any Python
CLI) and the NVML floor (`import pynvml; pynvml.nvmlInit()` against the same stand-in), and each
command's time is reported as a ratio to both, so that a shared machine's load cancels out.

Peak memory is the child's own: every command is started by a tiny C launcher (compiled here with
gcc) that forks from a ~1 MiB process and reads the child's ru_maxrss. Started straight from this
Python process, a child would report this process's peak instead (vfork shares its memory until
exec, and the kernel keeps that high-water mark).

    python benchmarks/bench_check.py [--runs 30] [--baseline OTHER_VENV/bin/cudadoctor]

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

LAUNCHER_C = r"""
#include <stdio.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
/* launcher FD CMD ARGS...: run CMD, then write its own peak RSS (KiB) to file descriptor FD. */
int main(int argc, char **argv) {
    if (argc < 3) return 2;
    pid_t pid = fork();
    if (pid < 0) return 126;
    if (pid == 0) { execvp(argv[2], argv + 2); _exit(127); }
    int status; struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) return 126;
    dprintf(atoi(argv[1]), "%ld\n", usage.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
"""


def build_launcher(work: Path) -> str:
    source = work / "launcher.c"
    source.write_text("#include <stdlib.h>\n" + LAUNCHER_C)
    binary = work / "launcher"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(source)], check=True)
    return str(binary)


def run_once(launcher: str, argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(seconds, the child's own peak RSS MiB, exit status) of one fresh process."""
    read, write = os.pipe()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [launcher, str(write)] + argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=ROOT, pass_fds=(write,),
    )
    os.close(write)
    status = proc.wait()
    elapsed = time.perf_counter() - start
    with os.fdopen(read) as pipe:
        peak_kib = float(pipe.read().strip() or "nan")
    return elapsed, peak_kib / 1024, status


def measure_all(
    launcher: str, cases: list[tuple[str, list[str]]], env: dict[str, str], runs: int
) -> dict[str, tuple[float, float, float, int]]:
    """Per command: (median s, fastest s, median peak MiB, exit status). The commands take turns, run
    after run, so that a shared machine's drifting load falls on all of them alike; the fastest run
    is the least disturbed one."""
    samples: dict[str, list[tuple[float, float, int]]] = {label: [] for label, _ in cases}
    for _ in range(runs):
        for label, argv in cases:
            samples[label].append(run_once(launcher, argv, env))
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
    parser.add_argument(
        "--baseline",
        metavar="EXE",
        help="Also time another install's console script (e.g. a checkout of the previous release in its own "
        "venv), interleaved with this one, so that before and after come from one run.",
    )
    parser.add_argument(
        "--torch",
        metavar="X.Y",
        help="Pass --torch X.Y to every cudadoctor command (this one's and the baseline's), so that both judge the "
        "same target even when their tables' default releases differ.",
    )
    args = parser.parse_args()
    pin = ["--torch", args.torch] if args.torch else []
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
        launcher = build_launcher(Path(work))
        cases = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("NVML floor (import pynvml; nvmlInit)", [sys.executable, "-c", "import pynvml; pynvml.nvmlInit()"]),
            # What the design's two front ends cost before any cudadoctor code: click and NVML.
            ("floor + click (import click, json)", [sys.executable, "-c", "import click, json, pynvml; pynvml.nvmlInit()"]),
            ("cudadoctor check --json (8 GPUs)", exe + ["check", "--json", *pin]),
            ("cudadoctor check (text, 8 GPUs)", exe + ["check", *pin]),
            ("cudadoctor recommend --image --format tag", exe + ["recommend", "--image", "--format", "tag", *pin]),
            ("python -m cudadoctor check --json", [sys.executable, "-m", "cudadoctor", "check", "--json", *pin]),
        ]
        if args.baseline:
            cases += [
                ("baseline: check --json (8 GPUs)", [args.baseline, "check", "--json", *pin]),
                ("baseline: check (text, 8 GPUs)", [args.baseline, "check", *pin]),
            ]
        measure_all(launcher, cases, env, 2)  # warm the page cache and write the .pyc files
        results = measure_all(launcher, cases, env, args.runs)
        floor, nvml_floor = results["python -c pass"][0], results["NVML floor (import pynvml; nvmlInit)"][0]
        print(
            f"{'command':45} {'median ms':>10} {'min ms':>7} {'x pass':>7} {'x NVML':>7} {'peak MiB':>9} {'exit':>5}"
            f"   ({args.runs} runs, {os.cpu_count()} CPUs; ratios of medians)"
        )
        for label, (seconds, fastest, peak, status) in results.items():
            print(
                f"{label:45} {seconds * 1000:10.1f} {fastest * 1000:7.1f} {seconds / floor:7.2f} {seconds / nvml_floor:7.2f}"
                f" {peak:9.1f} {status:5d}"
            )


if __name__ == "__main__":
    main()
