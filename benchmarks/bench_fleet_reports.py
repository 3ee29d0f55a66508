"""Median wall time and peak memory of the fleet's planning outputs on 10 000 nodes
(`fleet --matrix`, `--plan`, `--format prometheus`, `--format html`) beside `fleet --json` itself,
on bench_fleet.py's node list (~40 kinds of GPU x driver, plus CPU-only nodes), and where one
in-process run spends its time.

    python benchmarks/bench_fleet_reports.py [--runs 5] [--nodes 10000]

Numbers are written down in docs/performance.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_check import build_launcher  # noqa: E402
from bench_fleet import measure, write_node_list  # noqa: E402


def breakdown(nodes: Path) -> None:
    """One in-process run: judging the fleet, then the matrix, the plan and each renderer."""
    from cudadoctor.app.loader import load_table, read_user_file
    from cudadoctor.doctor import resolve_request
    from cudadoctor.fleet.judge import judge_fleet
    from cudadoctor.fleet.matrix import coverage_matrix
    from cudadoctor.fleet.plan import upgrade_plan
    from cudadoctor.fleet.prometheus import prometheus_text
    from cudadoctor.fleet.sources import FleetHost, SnapshotCache, decode_source, hosts_in
    from cudadoctor.report.fleet_html import fleet_html

    table = load_table()
    request = resolve_request(table)
    doc = decode_source(read_user_file(str(nodes), "source", ValueError), str(nodes))
    hosts = [h for h in hosts_in(doc, str(nodes), "nodes", SnapshotCache()) if isinstance(h, FleetHost)]
    marks = [time.perf_counter()]
    fleet = judge_fleet(hosts, table, request)
    marks.append(time.perf_counter())
    matrix = coverage_matrix(fleet, table)
    marks.append(time.perf_counter())
    plan = upgrade_plan(fleet, table)
    marks.append(time.perf_counter())
    text = prometheus_text(fleet, coverage_matrix(fleet, table, every_release=True))
    marks.append(time.perf_counter())
    html = fleet_html(fleet, matrix, plan)
    marks.append(time.perf_counter())
    names = ("judge_fleet", "coverage_matrix", "upgrade_plan", "prometheus (its own matrix)", "html")
    print(f"{len(hosts)} hosts, {len(fleet.groups)} groups, {len(matrix.rows)} matrix rows: "
          + ", ".join(f"{name} {(b - a) * 1000:.0f} ms" for name, a, b in zip(names, marks, marks[1:])))
    print(f"prometheus text {len(text.encode()) / 1024:.1f} KiB; html page {len(html.encode()) / 1024:.1f} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=10_000)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("cudadoctor"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        launcher = build_launcher(work)
        nodes = work / "nodes.json"
        n_kinds = write_node_list(nodes, args.nodes)
        print(f"{args.nodes} nodes over {n_kinds} GPU x driver kinds")
        breakdown(nodes)
        commands = [
            ("fleet --json", [exe, "fleet", "--json", str(nodes)]),
            ("fleet --matrix --json", [exe, "fleet", "--matrix", "--json", str(nodes)]),
            ("fleet --plan --json", [exe, "fleet", "--plan", "--json", str(nodes)]),
            ("fleet --matrix --plan (text)", [exe, "fleet", "--matrix", "--plan", str(nodes)]),
            ("fleet --format prometheus", [exe, "fleet", "--format", "prometheus", str(nodes)]),
            ("fleet --format html", [exe, "fleet", "--format", "html", str(nodes)]),
        ]
        print("| command | median ms | min ms | peak MiB | ratio to fleet --json |\n| --- | ---: | ---: | ---: | ---: |")
        base = None
        for label, argv in commands:
            median, fastest, peak = measure(launcher, argv, args.runs)
            base = base or median
            print(f"| `{label}`, {args.nodes} nodes | {median:.0f} | {fastest:.0f} | {peak:.1f} | {median / base:.2f} |", flush=True)


if __name__ == "__main__":
    main()
