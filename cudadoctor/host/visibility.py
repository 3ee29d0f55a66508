"""Which GPUs a CUDA program started here will see, from CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER.

Pure. The parsing follows CUDA's rules as PyTorch documents and mirrors them in
``torch/cuda/__init__.py`` (``_parse_visible_devices``, ``_transform_uuid_to_ordinals``):

- unset: every GPU; set but empty: none.
- a list of ordinals, each read like ``strtoul`` (``1gpu`` is 1); a negative or non-numeric entry,
  or one past the last GPU, ends the list (``-1`` alone hides every GPU);
- or a list of ``GPU-`` UUIDs (a unique prefix is enough) or ``MIG-`` identifiers; an unknown or
  ambiguous one ends the list;
- any repeated entry makes the whole list empty.

Ordinals count in CUDA's order: ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` is the PCI order nvidia-smi uses;
the default, ``FASTEST_FIRST``, puts the fastest GPU first, which on a host of mixed models may
differ from nvidia-smi's numbering (and cannot be predicted exactly, so it is flagged).
"""

from __future__ import annotations

from operator import attrgetter

from ..model.facts import GpuFacts, HostFacts, MigDeviceFacts
from ..model.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Sequence

SOURCE = "CUDA Programming Guide, CUDA Environment Variables; PyTorch torch/cuda/__init__.py (_parse_visible_devices)"

# Why entries were dropped.
EMPTY = "empty"  # set to the empty string
NEGATIVE = "negative"  # a negative or non-numeric entry ends the list (-1 hides every GPU)
OUT_OF_RANGE = "out-of-range"  # an ordinal past the last GPU ends the list
DUPLICATE = "duplicate"  # a repeated entry empties the list
UNKNOWN_ID = "unknown-id"  # a UUID / MIG identifier no GPU has ends the list
AMBIGUOUS_ID = "ambiguous-id"  # a UUID prefix that fits several GPUs ends the list
MIXED_IDS = "mixed-ids"  # a GPU- list with another kind of entry in it ends there


@record
class Visibility:
    setting: Optional[str]  # CUDA_VISIBLE_DEVICES as set; None when unset
    gpus: tuple[GpuFacts, ...]  # what CUDA enumerates, device 0 first (MIG: the parent GPUs)
    mig_devices: tuple[tuple[int, MigDeviceFacts], ...] = ()  # (parent GPU index, instance) chosen by MIG- ids
    reason: Optional[str] = None  # why entries were dropped, one of the constants above
    ignored: tuple[str, ...] = ()  # the entries CUDA ignores
    order_ambiguous: bool = False  # ordinals over mixed models without CUDA_DEVICE_ORDER=PCI_BUS_ID
    device_order: str = "FASTEST_FIRST"

    @property
    def restricted(self) -> bool:
        return self.setting is not None


def _leading_integer(text: str) -> int:
    """strtoul-like: the integer the entry starts with, -1 when there is none or it is negative."""
    digits = ""
    for i, char in enumerate(text):
        if char.isdigit() or (i == 0 and char in "+-"):
            digits += char
        else:
            break
    try:
        return int(digits) if digits not in ("", "+", "-") else -1
    except ValueError:
        return -1


def mixed_models(gpus: tuple[GpuFacts, ...]) -> bool:
    return len({(g.name, g.compute_capability) for g in gpus}) > 1


_INDEX = attrgetter("index")


def cuda_order(gpus: tuple[GpuFacts, ...], device_order: str) -> tuple[GpuFacts, ...]:
    """The GPUs in the order CUDA numbers them (PCI order where it can be known)."""
    if device_order == "PCI_BUS_ID":
        return tuple(sorted(gpus, key=lambda g: ((g.pci_bus_id or "").lower(), g.index)))
    return tuple(sorted(gpus, key=_INDEX))  # NVML numbers in PCI order


def resolve(gpus: tuple[GpuFacts, ...], setting: Optional[str], device_order: Optional[str] = None) -> Visibility:
    order = (device_order or "FASTEST_FIRST").strip().upper()
    ordered = cuda_order(gpus, order)
    if setting is None:
        return Visibility(None, ordered, device_order=order)
    entries = [entry.strip() for entry in setting.split(",")]
    if not setting.strip():
        return Visibility(setting, (), reason=EMPTY, device_order=order)
    if entries[0].startswith("GPU-"):
        return _resolve_uuids(ordered, setting, entries, order)
    if entries[0].startswith("MIG-"):
        return _resolve_mig(ordered, setting, entries, order)
    chosen: list[int] = []
    reason = None
    ignored: tuple[str, ...] = ()
    for position, entry in enumerate(entries):
        ordinal = _leading_integer(entry)
        if ordinal in chosen:
            return Visibility(setting, (), reason=DUPLICATE, ignored=tuple(entries), device_order=order)
        if ordinal < 0 or ordinal >= len(ordered):
            reason = NEGATIVE if ordinal < 0 else OUT_OF_RANGE
            ignored = tuple(entries[position:])
            break
        chosen.append(ordinal)
    ambiguous = order != "PCI_BUS_ID" and mixed_models(ordered)
    return Visibility(
        setting, tuple(ordered[i] for i in chosen), reason=reason, ignored=ignored, order_ambiguous=ambiguous, device_order=order
    )


def _resolve_uuids(ordered: tuple[GpuFacts, ...], setting: str, entries: list[str], order: str) -> Visibility:
    chosen: list[GpuFacts] = []
    for position, entry in enumerate(entries):
        if entries.index(entry) != position:
            return Visibility(setting, (), reason=DUPLICATE, ignored=tuple(entries), device_order=order)
        if not entry.startswith("GPU-"):
            return Visibility(setting, tuple(chosen), reason=MIXED_IDS, ignored=tuple(entries[position:]), device_order=order)
        matches = [g for g in ordered if g.uuid and g.uuid.lower().startswith(entry.lower())]
        if len(matches) != 1:
            reason = UNKNOWN_ID if not matches else AMBIGUOUS_ID
            return Visibility(setting, tuple(chosen), reason=reason, ignored=tuple(entries[position:]), device_order=order)
        if matches[0] in chosen:
            return Visibility(setting, (), reason=DUPLICATE, ignored=tuple(entries), device_order=order)
        chosen.append(matches[0])
    return Visibility(setting, tuple(chosen), device_order=order)


def _resolve_mig(ordered: tuple[GpuFacts, ...], setting: str, entries: list[str], order: str) -> Visibility:
    instances = [(gpu, mig) for gpu in ordered for mig in gpu.mig_devices]
    chosen: list[tuple[GpuFacts, MigDeviceFacts]] = []
    reason = None
    ignored: tuple[str, ...] = ()
    for position, entry in enumerate(entries):
        if entries.index(entry) != position:
            return Visibility(setting, (), reason=DUPLICATE, ignored=tuple(entries), device_order=order)
        matches = [(g, m) for g, m in instances if m.uuid and m.uuid.lower().startswith(entry.lower())]
        if len(matches) != 1 or not entry.startswith("MIG-"):
            reason = AMBIGUOUS_ID if len(matches) > 1 else UNKNOWN_ID
            ignored = tuple(entries[position:])
            break
        chosen.append(matches[0])
    parents: list[GpuFacts] = []
    for gpu, _ in chosen:
        if gpu not in parents:
            parents.append(gpu)
    return Visibility(
        setting,
        tuple(parents),
        mig_devices=tuple((gpu.index, mig) for gpu, mig in chosen),
        reason=reason,
        ignored=ignored,
        device_order=order,
    )


def visibility_of(facts: HostFacts) -> Visibility:
    """What CUDA will see on this host. What-if GPUs (--gpu) and hosts without system facts are
    taken whole: the environment of this shell says nothing about them."""
    nvml_gpus = all(g.source == "nvml" for g in facts.gpus)
    if facts.system is None or not nvml_gpus:
        return Visibility(None, tuple(facts.gpus))
    return resolve(tuple(facts.gpus), facts.system.env("CUDA_VISIBLE_DEVICES"), facts.system.env("CUDA_DEVICE_ORDER"))


def visible_devices_excluding(
    facts: HostFacts, excluded: Sequence[GpuFacts], view: Optional[Visibility] = None
) -> Optional[str]:
    """The environment setting that keeps every GPU CUDA sees now except the ``excluded`` ones, or
    None when nothing would be left. UUIDs when the user selects by UUID or the numbering is ambiguous."""
    view = view or visibility_of(facts)
    dropped = {gpu.index for gpu in excluded}
    if view.mig_devices:
        keep_mig = [mig.uuid for parent, mig in view.mig_devices if parent not in dropped and mig.uuid]
        return f"CUDA_VISIBLE_DEVICES={','.join(keep_mig)}" if keep_mig else None
    keep = [g for g in view.gpus if g.index not in dropped]
    if not keep:
        return None
    by_uuid = (view.setting or "").strip().startswith("GPU-")
    if by_uuid and all(g.uuid for g in keep):
        return "CUDA_VISIBLE_DEVICES=" + ",".join(g.uuid or "" for g in keep)
    if view.device_order != "PCI_BUS_ID" and mixed_models(tuple(facts.gpus)):
        # Fastest-first numbering of mixed models is not nvidia-smi's: pin the PCI order.
        pci = _positions(cuda_order(tuple(facts.gpus), "PCI_BUS_ID"))
        ordinals = [str(pci[g.index]) for g in keep]
        return "CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=" + ",".join(ordinals)
    ordered = _positions(cuda_order(tuple(facts.gpus), view.device_order))
    return "CUDA_VISIBLE_DEVICES=" + ",".join(str(ordered[g.index]) for g in keep)


def _positions(ordered: Sequence[GpuFacts]) -> dict[int, int]:
    """NVML index -> CUDA ordinal: one dict look-up per GPU instead of tuple.index (a linear scan
    of record comparisons, which made 1000 --gpu values take minutes)."""
    return {gpu.index: ordinal for ordinal, gpu in reversed(list(enumerate(ordered)))}
