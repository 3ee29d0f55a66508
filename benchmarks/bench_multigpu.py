"""What the multi-GPU facts and checks cost: `cudadoctor check --json` on an 8-GPU stand-in HGX
board (NVLink between every pair, the NVSwitch fabric completed: every new NVML call answers),
this tree against a tree without the multi-GPU group (by default the commit before it), in
interleaved fresh processes.

CPU time (user + system of the process and its NVML child, from the kernel's accounting of
waited-for children) is the figure: on a shared machine it moves less with the load than wall
time. Both trees run the same interpreter, the same stand-in library and the same host.

    python benchmarks/bench_multigpu.py [--runs 20] [--base REV]

Numbers are written down in docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from nvml_stub import hgx_config, prepare_fake_host  # noqa: E402

DEFAULT_BASE = "2ba286f"  # main before the multi-GPU work (issue 20)


def export_tree(rev: str, into: Path) -> Path:
    """The package and its table of commit ``rev`` unpacked below ``into`` (git archive; no checkout is touched)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "cudadoctor", "data"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run_once(tree: Path, env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one `python -m cudadoctor check --json` started in ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    status = subprocess.run(
        [sys.executable, "-m", "cudadoctor", "check", "--json"], cwd=tree, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    ).returncode  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if status not in (0, 1):
        raise SystemExit(f"check --json in {tree} exited {status}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--base", default=DEFAULT_BASE, help="the commit without the multi-GPU group")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        base = export_tree(args.base, Path(work) / "base")
        env = {**os.environ, **prepare_fake_host(Path(work) / "nvml", hgx_config(3)), "DOCKER_HOST": "unix:///nonexistent"}
        env.pop("PYTHONPATH", None)
        trees = {"without the group": base, "with the group": ROOT}
        for tree in trees.values():
            # Both trees run from bytecode (PYTHONDONTWRITEBYTECODE would leave a fresh export
            # compiling every module on every run), then once to warm the page cache.
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "cudadoctor")], check=True)
            run_once(tree, env)
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        wall: dict[str, list[float]] = {name: [] for name in trees}
        names = list(trees)
        for i in range(args.runs):
            for name in names if i % 2 == 0 else names[::-1]:  # interleaved, alternating who goes first
                spent, elapsed = run_once(trees[name], env)
                cpu[name].append(spent)
                wall[name].append(elapsed)
    print(f"`cudadoctor check --json`, 8 stand-in GPUs (HGX, all pairs NVLink), {args.runs} runs each, interleaved")
    for name in names:
        print(
            f"  {name:18}  CPU median {statistics.median(cpu[name]) * 1000:6.1f} ms  min {min(cpu[name]) * 1000:6.1f} ms"
            f"   wall median {statistics.median(wall[name]) * 1000:6.1f} ms"
        )
    old, new = names
    print(
        f"  ratio (with / without): CPU median {statistics.median(cpu[new]) / statistics.median(cpu[old]):.3f}, "
        f"CPU min {min(cpu[new]) / min(cpu[old]):.3f}, wall median {statistics.median(wall[new]) / statistics.median(wall[old]):.3f}"
    )


if __name__ == "__main__":
    main()
