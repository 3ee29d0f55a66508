"""What a scheduler needs to know about a node's multi-GPU paths, as NFD label pairs. Pure.

Values keep to what a label value may hold (63 characters of ``[A-Za-z0-9._-]``). Nothing is
written for what is not known (a node probed without pair facts): a nodeSelector must not match a
guess.
"""

from __future__ import annotations

from ..model.facts import HostFacts
from ..model.topology import FABRIC_NOT_SUPPORTED, TIER_HOST, TIER_NVLINK, islands, pair_matrix


def _all_some_none(count: int, total: int) -> str:
    return "all" if count == total else "none" if count == 0 else "some"


def topology_labels(facts: HostFacts) -> list[tuple[str, str]]:
    """(name, value) pairs: ``multi-gpu.p2p`` and ``multi-gpu.nvlink`` (all/some/none of the GPU
    pairs), ``multi-gpu.p2p-groups`` (how many groups peer-to-peer joins), ``multi-gpu.fabric``
    (the NVSwitch fabric's state, when every GPU in one reports the same) and ``multi-gpu.nvlink-domain``
    (its cluster and clique, when every GPU shares them)."""
    gpus = tuple(g for g in facts.gpus if not g.lost)
    labels: list[tuple[str, str]] = []
    matrix = pair_matrix(gpus) if len(gpus) >= 2 else None
    if matrix:
        tiers = list(matrix.values())
        labels.append(("multi-gpu.p2p", _all_some_none(sum(t != TIER_HOST for t in tiers), len(tiers))))
        labels.append(("multi-gpu.nvlink", _all_some_none(sum(t == TIER_NVLINK for t in tiers), len(tiers))))
        labels.append(("multi-gpu.p2p-groups", str(len(islands([g.index for g in gpus], matrix)))))
    fabrics = [g.fabric for g in gpus if g.fabric is not None and g.fabric.state != FABRIC_NOT_SUPPORTED]
    if fabrics and len(fabrics) == len(gpus):
        states = {f.state for f in fabrics}
        if len(states) == 1:
            labels.append(("multi-gpu.fabric", states.pop()))
        domains = {(f.cluster_uuid, f.clique_id) for f in fabrics}
        if len(domains) == 1:
            uuid, clique = domains.pop()
            if uuid and clique is not None:
                labels.append(("multi-gpu.nvlink-domain", f"{uuid}.{clique}"))
    return labels
