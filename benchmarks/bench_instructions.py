"""Instructions executed by `cudadoctor fleet --json` on the inputs bench_fleet.py generates and by one
`cudadoctor check --json --snapshot`, counted by valgrind's callgrind: the same count whatever else
the machine runs, so a change of a few per cent shows where CPU-time ratios on a shared machine
move by half from round to round (docs/performance.md). An instruction is not a nanosecond (a cache
miss costs more than an add), so this says how much work a change removed; bench_fleet.py says what
it costs in time.

    .venv/bin/python benchmarks/bench_instructions.py [--nodes 10000] [--against TREE]

Each command runs once per tree, under callgrind (about 60 times slower than natively: some
minutes for 10 000 distinct nodes), from cached bytecode in a cache of this run's own (warmed by
one native run). With ``--against TREE`` the same commands run from a second source tree too
(PYTHONPATH=TREE), both trees at once, one per core. Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_fleet import write_inputs  # noqa: E402

_COLLECTED = re.compile(rb"Collected : (\d+)")


def instructions(argv: list[str], env: dict[str, str]) -> int:
    """The instructions one run of ``argv`` executes (its own process: callgrind does not follow
    children, and no fleet command starts one)."""
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    found = _COLLECTED.search(run.stderr)
    if run.returncode not in (0, 1) or found is None:
        raise SystemExit(f"{argv}: exit {run.returncode}: {run.stderr.decode(errors='replace')[-400:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--against", metavar="TREE", help="also count every command run from this source tree (PYTHONPATH=TREE)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    exe = str(Path(sys.executable).with_name("cudadoctor"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        distinct, few, snapshots = write_inputs(work, args.nodes)
        commands = [
            ("check --json --snapshot (one host)", [exe, "check", "--json", "--snapshot", str(ROOT / "tests/hosts/h100-550.json")]),
            (f"fleet --json, {args.nodes} distinct nodes", [exe, "fleet", "--json", str(distinct)]),
            (f"fleet --json, {args.nodes} nodes of ~40 kinds", [exe, "fleet", "--json", str(few)]),
            (f"fleet --json, {args.nodes} snapshot files", [exe, "fleet", "--json", str(snapshots)]),
        ]
        base = dict(os.environ)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        trees = {os.environ.get("PYTHONPATH") or "installed": dict(base, XDG_CACHE_HOME=str(work / "cache"))}
        if args.against:
            trees[args.against] = dict(base, PYTHONPATH=args.against, XDG_CACHE_HOME=str(work / "cache-against"))
        for env in trees.values():  # bytecode, compiled modules and table stored natively first
            for _, argv in commands:
                subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=tmp)

        def count(env: dict[str, str]) -> list[int]:
            return [instructions(argv, env) for _, argv in commands]

        with ThreadPoolExecutor(len(trees)) as pool:
            counts = dict(zip(trees, pool.map(count, trees.values())))
        print("| command | " + " | ".join(f"{tree}: instructions (x check)" for tree in trees) + " |")
        print("| --- |" + " ---: |" * len(trees))
        for i, (label, _) in enumerate(commands):
            cells = [f"{counts[tree][i] / 1e6:,.0f} M ({counts[tree][i] / counts[tree][0]:.2f})" for tree in trees]
            print(f"| `{label}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
