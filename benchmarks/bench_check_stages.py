"""Where the CPU time of one `check --json` goes, stage by stage, in one process.

Runs the stages of `cudadoctor check --json` on the 8-GPU stand-in host (tests/nvml_stub.py) in a
fresh process each round, with ``time.process_time()`` around each (the forked NVML child's time
read with ``getrusage(RUSAGE_CHILDREN)``), and prints each stage's median and interquartile range.
The imports are those of the modules themselves, from the file system (not the console script's
compiled modules), in the order the command imports them.

    .venv/bin/python benchmarks/bench_check_stages.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from nvml_stub import prepare_fake_host  # noqa: E402

STAGES = r"""
import json, resource, sys, time
clock = time.process_time
marks = {}
start = clock()
from cudadoctor.cli import fast, check_run, inputs
from cudadoctor.app import loader
import cudadoctor.doctor, cudadoctor.doctor.answer, cudadoctor.report.payload, cudadoctor.probe.host, cudadoctor.probe.nvml
marks["imports"] = clock() - start
start = clock(); table = loader.load_table(); marks["table"] = clock() - start
from cudadoctor.probe.host import probe_host
from cudadoctor.probe.nvml import NvmlWatch
start = clock(); watch = NvmlWatch.start(10); marks["fork"] = clock() - start
start = clock(); facts = probe_host(nvml=watch); marks["probes in the parent"] = clock() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
marks["the NVML child"] = usage.ru_utime + usage.ru_stime
from cudadoctor.doctor import check, resolve_request
from cudadoctor.doctor.answer import decide
from cudadoctor.report.payload import check_payload
start = clock(); request = resolve_request(table, newer_ok=True); result = check(facts, table, request)
answer = decide(result, table); marks["request, check, decide"] = clock() - start
start = clock(); text = json.dumps(check_payload(result, table, answer), indent=2); marks["JSON"] = clock() - start
print(json.dumps({k: v * 1000 for k, v in marks.items()}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as work:
        env = {**os.environ, **prepare_fake_host(Path(work) / "host"), "CUDADOCTOR_CACHE": str(Path(work) / "cache")}
        env.pop("CUDADOCTOR_TABLE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for round_number in range(args.rounds + 1):
            done = subprocess.run([sys.executable, "-c", STAGES], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
            if round_number == 0:
                continue  # the first round stores the compiled table and writes the bytecode
            for stage, ms in json.loads(done.stdout).items():
                samples.setdefault(stage, []).append(ms)
    load = os.getloadavg()
    print(f"{args.rounds} rounds, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; CPU ms, median (p25-p75)")
    for stage, values in samples.items():
        q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
        print(f"| {stage} | {q2:.1f} ({q1:.1f}-{q3:.1f}) |")


if __name__ == "__main__":
    main()
