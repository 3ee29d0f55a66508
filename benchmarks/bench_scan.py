"""Reading a large CUDA binary's GPU code against reading the file once (goal: <= 0.1x).

In the same run, interleaved round by round so both see the same machine: ``cat FILE > /dev/null``
(a child process; its CPU from the children's rusage), the reader alone in this process
(cudadoctor.binaries.read.read_binary), and the whole command ``cudadoctor scan FILE --gpu H100
--json`` in a fresh process (start-up included). Wall and CPU medians, their spread (min-max), the
ratios to cat, and the bytes the reader asked for. The file is read once first, so every side
reads from the page cache; the bytes read say what a cold cache would cost.
Optionally (--env DIR) a whole environment or directory is scanned too.

    .venv/bin/python benchmarks/bench_scan.py [FILE] [--runs N] [--env DIR]

Without FILE: the largest shared object with a .nv_fatbin section under the interpreter's
site-packages/nvidia (NVIDIA's wheels: libcublasLt, libcurand, ...).
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any, Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudadoctor.binaries.read import read_binary  # noqa: E402


class Counting:
    """A file whose reads are counted (the reader's I/O, in bytes)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.bytes = stream, 0

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self.stream.seek(offset, whence))

    def read(self, count: int = -1) -> bytes:
        data: bytes = self.stream.read(count)
        self.bytes += len(data)
        return data


def default_file() -> Optional[str]:
    base = os.path.join(sysconfig.get_paths()["purelib"], "nvidia")
    candidates = sorted(glob.glob(os.path.join(base, "**", "*.so*"), recursive=True), key=os.path.getsize, reverse=True)
    for path in candidates:
        with open(path, "rb") as stream:
            try:
                if read_binary(stream, os.path.getsize(path)).entries:  # type: ignore[arg-type]
                    return path
            except ValueError:
                continue
    return None


def child(command: list[str], shell: bool = False) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command if not shell else " ".join(command), shell=shell, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(path: str) -> Callable[[], tuple[float, float]]:
    def run() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        with open(path, "rb", buffering=0) as stream:  # as the scan opens files
            read_binary(stream, os.path.getsize(path))
        return time.perf_counter() - start, time.process_time() - cpu

    return run


def line(label: str, samples: list[tuple[float, float]], base: Optional[list[tuple[float, float]]] = None) -> str:
    walls, cpus = [s[0] * 1000 for s in samples], [s[1] * 1000 for s in samples]
    text = (
        f"{label:<34} wall median {statistics.median(walls):9.2f} ms ({min(walls):.2f}-{max(walls):.2f}), "
        f"CPU median {statistics.median(cpus):9.2f} ms ({min(cpus):.2f}-{max(cpus):.2f})"
    )
    if base is not None:
        base_wall = statistics.median(s[0] for s in base)
        base_cpu = statistics.median(s[1] for s in base)
        text += f"; vs cat: wall {statistics.median(s[0] for s in samples) / base_wall:.3f}x"
        text += f", CPU {statistics.median(s[1] for s in samples) / base_cpu:.3f}x" if base_cpu > 0 else ", CPU n/a"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("file", nargs="?")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--env", metavar="DIR", help="also scan this environment or directory")
    args = parser.parse_args()
    path = args.file or default_file()
    if path is None:
        raise SystemExit("no FILE given and no NVIDIA library with GPU code found under site-packages/nvidia")
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        counting = Counting(stream)
        code = read_binary(counting, size)  # type: ignore[arg-type]
    child(["cat", path, ">", "/dev/null"], shell=True)  # into the page cache
    cat: list[tuple[float, float]] = []
    reader: list[tuple[float, float]] = []
    command: list[tuple[float, float]] = []
    env: list[tuple[float, float]] = []
    scan = [sys.executable, "-m", "cudadoctor", "scan", "--gpu", "H100", "--json"]
    for _ in range(args.runs):
        cat.append(child(["cat", f"'{path}'", ">", "/dev/null"], shell=True))
        reader.append(in_process(path)())
        command.append(child(scan + [path]))
        if args.env:
            env.append(child(scan + [args.env]))
    print(f"file {path}: {size / 2**20:.1f} MiB, {code.fatbins} fat binaries, {len(code.entries)} entries")
    print(f"reader asked for {counting.bytes} bytes ({counting.bytes / size * 100:.3f}% of the file)")
    print(f"{args.runs} interleaved rounds, page cache warm")
    print(line("cat FILE > /dev/null", cat))
    print(line("reader (read_binary, in process)", reader, cat))
    print(line("cudadoctor scan FILE (new process)", command, cat))
    if env:
        print(line(f"cudadoctor scan {args.env}", env))


if __name__ == "__main__":
    main()
