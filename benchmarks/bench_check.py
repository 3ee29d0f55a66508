"""CPU time (and wall time) of `cudadoctor check --json` on an 8-GPU stand-in host, as ratios to
`python -c pass` and to the NVML floor measured in the same rounds.

The host is the stand-in libnvidia-ml.so.1 that the tests compile (tests/nvml_stub.py) with
eight GPUs, so the real nvidia-ml-py code path runs. Each run is a fresh process, as a user
would start it. The floors are `python -c pass` (any Python CLI) and the NVML floor
(`import pynvml; pynvml.nvmlInit()` against the same stand-in: what any tool that asks NVML pays).

Why ratios of CPU time, per round: on a shared machine the load drifts from second to second, and
wall time counts the time a process waits for a core. CPU time (user + system, of the process and
of the children it waited for, such as NVML's forked child) counts only the work done, and a
round runs every command once, back to back, so each round's ratio compares commands under the
same load. The table gives, per command, the median of the per-round ratios and their spread
(the interquartile range, p25-p75), for CPU and for wall time; the medians of the raw times are
shown beside them, but only the ratios are meant to be compared across runs or machines. The
order of the commands is rotated from round to round, so no command always runs first.

Every command is started by a tiny C launcher (compiled here with gcc) that forks from a ~1 MiB
process and reads the child's resource usage with wait4: its CPU time and its own peak memory
(started straight from this Python process, a child would report this process's peak instead:
vfork shares its memory until exec, and the kernel keeps that high-water mark).

    python benchmarks/bench_check.py [--rounds 40] [--baseline OTHER_VENV/bin/cudadoctor]
                                     [--peer 'LABEL=COMMAND ...'] [--markdown]

The numbers are written down in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from nvml_stub import prepare_fake_host  # noqa: E402

LAUNCHER_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
/* launcher FD CMD ARGS...: run CMD, then write to file descriptor FD its peak RSS (KiB) and its CPU
   time in microseconds, user and system, its waited-for children included (wait4's usage). */
int main(int argc, char **argv) {
    if (argc < 3) return 2;
    pid_t pid = fork();
    if (pid < 0) return 126;
    if (pid == 0) { execvp(argv[2], argv + 2); _exit(127); }
    int status; struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) return 126;
    dprintf(atoi(argv[1]), "%ld %ld %ld\n", usage.ru_maxrss,
            (long)usage.ru_utime.tv_sec * 1000000L + usage.ru_utime.tv_usec,
            (long)usage.ru_stime.tv_sec * 1000000L + usage.ru_stime.tv_usec);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
"""

PASS = "python -c pass"
FLOOR = "NVML floor (import pynvml; nvmlInit)"


class Sample(NamedTuple):
    wall: float  # seconds
    cpu: float  # seconds, user + system, children included
    peak: float  # MiB
    status: int


def build_launcher(work: Path) -> str:
    source = work / "launcher.c"
    source.write_text(LAUNCHER_C)
    binary = work / "launcher"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(source)], check=True)
    return str(binary)


def run_once(launcher: str, argv: list[str], env: dict[str, str]) -> Sample:
    read, write = os.pipe()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [launcher, str(write)] + argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=ROOT, pass_fds=(write,),
    )  # fmt: skip
    os.close(write)
    status = proc.wait()
    wall = time.perf_counter() - start
    with os.fdopen(read) as pipe:
        fields = pipe.read().split()
    peak_kib, user_us, system_us = (float(f) for f in fields) if len(fields) == 3 else (float("nan"),) * 3
    return Sample(wall, (user_us + system_us) / 1e6, peak_kib / 1024, status)


def measure(launcher: str, cases: list[tuple[str, list[str]]], env: dict[str, str], rounds: int) -> list[dict[str, Sample]]:
    """One dict per round: every command run once, in an order rotated from round to round."""
    results = []
    for round_number in range(rounds):
        shift = round_number % len(cases)
        order = cases[shift:] + cases[:shift]
        results.append({label: run_once(launcher, argv, env) for label, argv in order})
    return results


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def summarise(rounds: list[dict[str, Sample]], labels: list[str]) -> list[dict[str, object]]:
    rows = []
    for label in labels:
        cpu_pass = [r[label].cpu / r[PASS].cpu for r in rounds]
        cpu_floor = [r[label].cpu / r[FLOOR].cpu for r in rounds]
        wall_pass = [r[label].wall / r[PASS].wall for r in rounds]
        wall_floor = [r[label].wall / r[FLOOR].wall for r in rounds]
        statuses = [r[label].status for r in rounds]
        rows.append(
            {
                "label": label,
                "cpu_ms": statistics.median(r[label].cpu for r in rounds) * 1000,
                "wall_ms": statistics.median(r[label].wall for r in rounds) * 1000,
                "cpu_pass": quartiles(cpu_pass),
                "cpu_floor": quartiles(cpu_floor),
                "wall_pass": quartiles(wall_pass),
                "wall_floor": quartiles(wall_floor),
                "peak": statistics.median(r[label].peak for r in rounds),
                "status": max(set(statistics.multimode(statuses))),
            }
        )
    return rows


def spread(q: object) -> str:
    low, mid, high = q  # type: ignore[misc]
    return f"{mid:.2f} ({low:.2f}-{high:.2f})"


def print_table(rows: list[dict[str, object]], markdown: bool) -> None:
    heads = ["command", "CPU ms", "wall ms", "CPU x pass", "CPU x NVML floor", "wall x pass", "wall x NVML floor", "peak MiB", "exit"]
    lines = [[str(r["label"]), f"{r['cpu_ms']:.1f}", f"{r['wall_ms']:.1f}", spread(r["cpu_pass"]), spread(r["cpu_floor"]),
              spread(r["wall_pass"]), spread(r["wall_floor"]), f"{r['peak']:.1f}", str(r["status"])] for r in rows]  # fmt: skip
    if markdown:
        print("| " + " | ".join(heads) + " |")
        print("| --- |" + " ---: |" * (len(heads) - 1))
        for line in lines:
            print("| " + " | ".join([f"`{line[0]}`", *line[1:]]) + " |")
        return
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(heads, widths))))
    for line in lines:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", "--runs", dest="rounds", type=int, default=40, help="Rounds (--runs: its earlier name).")
    parser.add_argument(
        "--baseline", metavar="EXE",
        help="Also run another install's console script (e.g. the previous commit in its own venv) in the same rounds.",
    )  # fmt: skip
    parser.add_argument(
        "--peer", metavar="LABEL=COMMAND", action="append", default=[],
        help="Also run another tool's command line (split as a shell would) in the same rounds; repeatable.",
    )  # fmt: skip
    parser.add_argument("--torch", metavar="X.Y", help="Pass --torch X.Y to every cudadoctor command (this one's and the baseline's).")
    parser.add_argument("--markdown", action="store_true", help="Print the table as Markdown (for docs/performance.md).")
    args = parser.parse_args()
    pin = ["--torch", args.torch] if args.torch else []
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, **prepare_fake_host(Path(work) / "host")}
        env.pop("CUDADOCTOR_TABLE", None)
        env["CUDADOCTOR_CACHE"] = str(Path(work) / "cache")  # the compiled table lives here, not in the user's cache
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode cached; so do these runs
        script = Path(sys.executable).with_name("cudadoctor")  # the console script, as users run it
        if not script.exists():
            sys.exit(f"no console script at {script}: install the project first (pip install -e .)")
        exe = [str(script)]
        what_if = ["--driver", "550.54.15", "--gpu", "H100"]
        cases = [
            (PASS, [sys.executable, "-c", "pass"]),
            (FLOOR, [sys.executable, "-c", "import pynvml; pynvml.nvmlInit()"]),
            ("cudadoctor check --json (8 GPUs)", exe + ["check", "--json", *pin]),
            ("cudadoctor check --json --driver --gpu", exe + ["check", "--json", *what_if, *pin]),
            ("cudadoctor check (text, 8 GPUs)", exe + ["check", *pin]),
            ("cudadoctor recommend --image --format tag", exe + ["recommend", "--image", "--format", "tag", *pin]),
            ("python -m cudadoctor check --json", [sys.executable, "-m", "cudadoctor", "check", "--json", *pin]),
            ("cudadoctor check --help (click)", exe + ["check", "--help"]),
        ]
        if args.baseline:
            cases += [
                ("baseline: check --json (8 GPUs)", [args.baseline, "check", "--json", *pin]),
                ("baseline: check --json --driver --gpu", [args.baseline, "check", "--json", *what_if, *pin]),
            ]
        for peer in args.peer:
            label, _, command = peer.partition("=")
            cases.append((f"peer: {label}", shlex.split(command)))
        launcher = build_launcher(Path(work))
        measure(launcher, cases, env, 2)  # warm the page cache, the .pyc files and the compiled table
        rounds = measure(launcher, cases, env, args.rounds)
        rows = summarise(rounds, [label for label, _ in cases])
        load = os.getloadavg()
        print(
            f"{args.rounds} rounds, {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
            "ratios: median of the per-round ratios (p25-p75)"
        )
        print_table(rows, args.markdown)


if __name__ == "__main__":
    main()
