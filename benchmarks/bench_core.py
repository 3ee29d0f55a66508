"""Cost of the pure entry point per distinct host, in one process: ``doctor.check(facts, table,
request)`` as the fleet and the Python API call it, beside one `cudadoctor check --json
--snapshot` run as a fresh process in the same interleaved rounds (docs/performance.md, "The core").

Hosts: the realistic snapshots of tests/hosts and GFD-labelled nodes of every GPU model on every
driver branch, each check given a facts object of its own (so nothing is reused from one host's
check to the next but what the table works out once). Each round times one pass over all of them
(CPU time) and one `check --json` process; the table shows per round the CPU µs per host, the
same as a fraction of the `check --json` process of that round, and their medians and spread.

    .venv/bin/python benchmarks/bench_core.py [--rounds 7] [--copies 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from cudadoctor.app.loader import load_table  # noqa: E402
from cudadoctor.doctor import check, resolve_request  # noqa: E402
from cudadoctor.fleet.gfd import facts_from_labels  # noqa: E402
from cudadoctor.model.facts import HostFacts  # noqa: E402
from cudadoctor.model.record import replace  # noqa: E402
from cudadoctor.model.snapshot import decode_snapshot  # noqa: E402
from fleet_nodes import GPUS, gfd_labels  # noqa: E402

HOSTS = ROOT / "tests" / "hosts"
DRIVERS = ["470.256.02", "525.147.05", "535.216.01", "550.127.05", "560.35.03", "570.133.20", "575.57.08",
           "580.95.05", "590.44.01", "595.45.04"]  # fmt: skip


def hosts(copies: int) -> list[HostFacts]:
    """``copies`` distinct facts objects of each kind of host (its own hostname: a fresh object)."""
    kinds = [decode_snapshot(path.read_text()) for path in sorted(HOSTS.glob("*.json"))]
    for gpu in sorted(GPUS):
        for driver in (["470.256.02"] if gpu == "K80" else DRIVERS):
            facts = facts_from_labels(gfd_labels(gpu, driver, 8 if gpu in ("H100", "A100") else 2), node_os="linux", node_arch="amd64")
            assert facts is not None
            kinds.append(facts)
    return [replace(kind, hostname=f"host-{i}-{j}") for j in range(copies) for i, kind in enumerate(kinds)]


def cpu_of_check_process() -> float:
    exe = str(Path(sys.executable).with_name("cudadoctor"))
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed package runs: its bytecode cached
    proc = subprocess.Popen([exe, "check", "--json", "--snapshot", str(HOSTS / "h100-550.json")], stdout=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--copies", type=int, default=20)
    args = parser.parse_args()
    table = load_table()
    request = resolve_request(table)
    for facts in hosts(1):  # warm: what the table works out once (its indexes and memos)
        check(facts, table, request)
    per_host, fractions = [], []
    for _ in range(args.rounds):
        batch = hosts(args.copies)  # fresh objects each round: no host's view is reused
        started = time.process_time()
        for facts in batch:
            check(facts, table, request)
        micro = (time.process_time() - started) / len(batch) * 1e6
        process = cpu_of_check_process()
        per_host.append(micro)
        fractions.append(micro / 1e6 / process)
        print(f"round: {len(batch)} hosts, {micro:.0f} µs CPU per host; one check --json process {process * 1000:.0f} ms CPU", flush=True)
    print(f"check() per distinct host: median {statistics.median(per_host):.0f} µs CPU (range {min(per_host):.0f}-{max(per_host):.0f}); "
          f"as a fraction of one `check --json`: median {statistics.median(fractions):.4f} "
          f"(range {min(fractions):.4f}-{max(fractions):.4f})")


if __name__ == "__main__":
    main()
