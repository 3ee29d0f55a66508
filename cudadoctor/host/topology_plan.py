"""``check --topology FILE``: judge the GPUs with the pair facts of another host's snapshot (a plan
for a board not at hand, or this host's GPUs as they were probed on the real machine). Pure."""

from __future__ import annotations

from ..model.facts import HostFacts
from ..model.record import replace


class TopologyError(ValueError):
    """The snapshot cannot lend its topology to these GPUs; the message says why and what to give."""


def apply_topology(facts: HostFacts, source: HostFacts, where: str) -> HostFacts:
    """``facts`` with each GPU's peers, NVLink links and fabric taken from GPU of the same index in
    ``source`` (the same number of GPUs is required: the pair facts name GPUs by index)."""
    if not facts.gpus:
        raise TopologyError(f"--topology {where}: there are no GPUs to apply it to (give --gpu for each GPU of the plan)")
    if len(source.gpus) != len(facts.gpus):
        raise TopologyError(
            f"--topology {where}: it describes {len(source.gpus)} GPU(s), the host judged has {len(facts.gpus)} "
            "(give a snapshot of a host with as many GPUs, or as many --gpu)"
        )
    if all(gpu.peers is None for gpu in source.gpus):
        raise TopologyError(
            f"--topology {where}: it holds no pair facts (written before cudadoctor read them, or NVML could not say); "
            "probe that host again with `cudadoctor probe --output FILE`"
        )
    return replace(
        facts,
        gpus=tuple(
            replace(gpu, peers=lent.peers, nvlink_links=lent.nvlink_links, nvlink_active=lent.nvlink_active, fabric=lent.fabric)
            for gpu, lent in zip(facts.gpus, source.gpus)
        ),
    )
