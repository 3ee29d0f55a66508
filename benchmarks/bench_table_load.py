"""CPU time to load the shipped compatibility table, three ways, interleaved round by round.

- *parsed*: the first load in a fresh process with an empty cache: the JSON parsed and every rule
  of compat/validate.py run (what the first command after an install or an upgrade pays, and what
  any `--table` file, config table or overlay costs on every run);
- *compiled*: the first load in a fresh process when the compiled form is in the cache
  (app/compiled_table.py): what every later command pays;
- *warm parse*: parsing and validating again in a process that already did (the validation work
  alone, imports done and the file in memory).

Each figure is CPU time (user + system) measured inside the process around ``load_table()``
only, so the interpreter's start-up and the imports are not in it; the table reports the median
and the interquartile range (p25-p75) over the rounds. On a shared machine read the ratio of
*parsed* to *compiled* rather than the milliseconds.

    .venv/bin/python benchmarks/bench_table_load.py [--rounds 30]
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

ONE_LOAD = (
    "import time\n"
    "from cudadoctor.app.loader import load_table\n"
    "start = time.process_time()\n"
    "load_table()\n"
    "print((time.process_time() - start) * 1000)\n"
)


def load_in_fresh_process(cache: Path) -> float:
    env = {**os.environ, "CUDADOCTOR_CACHE": str(cache)}
    env.pop("CUDADOCTOR_TABLE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-c", ONE_LOAD], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    return float(done.stdout)


def warm_parse() -> float:
    from cudadoctor.app.loader import default_table_path, read_user_file
    from cudadoctor.compat.table import TableError
    from cudadoctor.compat.validate import parse_table, reject_duplicate_keys
    import json

    path = default_table_path()
    text = read_user_file(path, "table", TableError)
    start = time.process_time()
    parse_table(json.loads(text, object_pairs_hook=reject_duplicate_keys), path)
    return (time.process_time() - start) * 1000


def summary(samples: list[float]) -> str:
    q1, q2, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return f"{q2:7.2f} ms  ({q1:.2f}-{q3:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", "--runs", dest="rounds", type=int, default=30, help="Rounds (--runs: its earlier name).")
    args = parser.parse_args()
    parsed, compiled, warm = [], [], []
    with tempfile.TemporaryDirectory() as work:
        kept = Path(work) / "kept"  # holds the compiled form once the first load stored it
        load_in_fresh_process(kept)
        warm_parse()
        for round_number in range(args.rounds):
            empty = Path(work) / f"empty-{round_number}"
            parsed.append(load_in_fresh_process(empty))
            compiled.append(load_in_fresh_process(kept))
            warm.append(warm_parse())
    load = os.getloadavg()
    print(f"{args.rounds} rounds, {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; CPU time, median (p25-p75)")
    print(f"parsed and validated, fresh process  {summary(parsed)}")
    print(f"compiled form, fresh process         {summary(compiled)}")
    print(f"parsed and validated again, warm     {summary(warm)}")
    ratios = [p / c for p, c in zip(parsed, compiled)]
    print(f"parsed / compiled, per round         {summary(ratios).replace(' ms', ' x ')}")


if __name__ == "__main__":
    main()
