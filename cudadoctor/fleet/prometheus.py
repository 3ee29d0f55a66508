"""The fleet's verdicts as Prometheus metrics, in the text exposition format (what node-exporter's
textfile collector reads, and what `fleet --format prometheus` prints). Pure: text out.

Conventions: every name starts with ``cudadoctor_``; values are host counts (a snapshot of one
host, as `probe --prometheus` writes, counts 0 or 1), except the ``_info`` metrics, whose value is 1; labels carry only low-cardinality values
(releases, variants, verdicts, finding codes, driver versions), never host names, which the
scrape's own ``instance`` label carries."""

from __future__ import annotations

from typing import Iterable, Optional

from ..model.findings import FAIL
from .judge import VERDICTS, FleetResult
from .matrix import Matrix

PREFIX = "cudadoctor_"


def label_value(value: str) -> str:
    """A label value as the exposition format quotes it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _labels(pairs: Iterable[tuple[str, Optional[str]]]) -> str:
    inner = ",".join(f'{name}="{label_value(value or "")}"' for name, value in pairs)
    return "{" + inner + "}" if inner else ""


class _Metrics:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, help_text: str, samples: Iterable[tuple[tuple[tuple[str, Optional[str]], ...], int]]) -> None:
        self.lines.append(f"# HELP {PREFIX}{name} {_help(help_text)}")
        self.lines.append(f"# TYPE {PREFIX}{name} gauge")
        for labels, value in samples:
            self.lines.append(f"{PREFIX}{name}{_labels(labels)} {value}")


def prometheus_text(fleet: FleetResult, matrix: Matrix, version: Optional[str] = None) -> str:
    """The metrics: hosts by verdict for the target judged, hosts by verdict per release (the
    coverage matrix), the build that runs on the most hosts as an info metric, hosts per driver
    version, and hosts per finding code."""
    out = _Metrics()
    out.family("info", "The cudadoctor (its version) that wrote these metrics.",
               [((("version", version or "unknown"),), 1)])
    summary = fleet.summary
    out.family("hosts", "Hosts by their verdict for the target judged (the newest release each runs, unless --torch named one).",
               [((("verdict", v),), summary[v]) for v in VERDICTS])
    release_samples = []
    runs_samples = []
    for row in matrix.rows:
        for verdict, count in (("ok", row.ok), ("warn", row.warn), (FAIL, row.fail)):
            release_samples.append(((("torch", row.torch), ("verdict", verdict)), count))
        runs_samples.append(((("torch", row.torch),), row.runs))
    out.family("release_hosts", "Hosts by their verdict for each PyTorch release, judged as with --torch.", release_samples)
    out.family("release_runs_hosts", "Hosts that run each PyTorch release (verdict ok or warn).", runs_samples)
    answer = fleet.answer
    newest: list[tuple[tuple[tuple[str, Optional[str]], ...], int]] = []
    if answer is not None and answer.hosts:
        newest.append(((("torch", answer.torch or fleet.request.release.version), ("variant", answer.variant), ("cuda", answer.cuda)),
                       answer.hosts))
    # An info metric's value is 1 (its labels are the information); the hosts are a gauge of their own.
    out.family("newest_runnable_info", "The newest PyTorch release and variant that runs on the most hosts (the fleet's answer).",
               [(labels, 1) for labels, _ in newest])
    out.family("newest_runnable_hosts", "Hosts that run the fleet's answer (the build cudadoctor_newest_runnable_info names).", newest)
    every = [((("torch", matrix.every),), 1)] if matrix.every is not None else []
    out.family("every_host_release_info", "The newest PyTorch release every host able to run PyTorch runs.", every)
    drivers: dict[str, int] = {}
    for group in fleet.groups:
        key = group.driver or "unknown"
        drivers[key] = drivers.get(key, 0) + len(group.hosts)
    out.family("driver_hosts", "Hosts by NVIDIA driver version.",
               [((("version", driver), ("branch", driver.split(".")[0] if driver != "unknown" else "unknown")), n)
                for driver, n in sorted(drivers.items())])
    findings: dict[tuple[str, str], int] = {}
    for group in fleet.groups:
        if group.result is None:
            continue
        for finding in dict.fromkeys((f.code, f.severity) for f in group.result.findings):
            findings[finding] = findings.get(finding, 0) + len(group.hosts)
    out.family("finding_hosts", "Hosts with each finding code, by severity, for the target judged.",
               [((("code", code), ("severity", severity)), n) for (code, severity), n in sorted(findings.items())])
    return "\n".join(out.lines) + "\n"
