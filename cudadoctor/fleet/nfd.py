"""This host's verdicts as a Node Feature Discovery local feature file (``features.d``). Pure.

NFD's ``local`` feature source reads ``/etc/kubernetes/node-feature-discovery/features.d/*``:
one ``<namespace>/<name>[=<value>]`` per line, ``#`` comments, 64 kB at most; files should be
written to a dot-file and renamed into place (NFD's customization guide, "Local feature source").
The labels live under ``cudadoctor.feature.node.kubernetes.io``: a subdomain of NFD's own
namespace, which nfd-master accepts without ``-extra-label-ns``. Label values are at most 63
characters of ``[A-Za-z0-9._-]``, so variants are written, not image references.
"""

from __future__ import annotations

from typing import Optional

from ..compat.table import CompatTable
from ..doctor.check import check, recommend_for
from ..doctor.request import resolve_request
from ..model.record import replace
from ..model.facts import HostFacts
from ..model.findings import FAIL
from .topology_labels import topology_labels

NAMESPACE = "cudadoctor.feature.node.kubernetes.io"


def nfd_features(facts: HostFacts, table: CompatTable, version: Optional[str] = None) -> list[str]:
    """The feature lines: for each PyTorch release of the table, the CUDA variant cudadoctor
    recommends here (none when no variant fits), and the verdict for the default release with its
    variant (that only when the verdict is not fail: a nodeSelector on it must not pick a node
    that cannot run it)."""
    lines = [f"# cudadoctor {version or ''} verdicts for this host; see `cudadoctor fleet --help`".replace("  ", " ")]
    # The labels name wheel variants: a config's NGC default family must not make them NGC months.
    table = replace(table, default_ngc=None) if table.default_ngc else table
    default = resolve_request(table)
    result = check(facts, table, default)
    lines.append(f"{NAMESPACE}/verdict={result.verdict}")
    # The release the verdict is for: the newest that runs here (the default target), else the newest.
    lines.append(f"{NAMESPACE}/torch={(result.target.torch if result.target is not None else '') or default.release.version}")
    if result.target is not None and result.verdict != FAIL:
        lines.append(f"{NAMESPACE}/variant={result.target.variant}")
    for release in sorted(table.pytorch_releases, key=lambda r: r.key, reverse=True):
        # Wheels: a release the image family has no image of still runs here as a pip install.
        rec = recommend_for(facts, table, resolve_request(table, torch=release.version), images=False)
        if rec.found and rec.variant and rec.support in ("full", "minor-compat", "forward-compat"):  # known to run here
            lines.append(f"{NAMESPACE}/torch-{release.version}={rec.variant}")
            lines.append(f"{NAMESPACE}/torch-{release.version}.support={rec.support}")
    lines += [f"{NAMESPACE}/{name}={value}" for name, value in topology_labels(facts)]
    return lines
