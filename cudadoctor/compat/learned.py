"""Arch lists learned from the binaries of a wheel (`cudadoctor table learn`), kept in the table
overlay beside what `table update` read from the index, and merged over the table's JSON. Pure:
the CLI reads the wheel and writes the overlay.

A learned list is evidence "binary", the strongest level: it replaces a variant's arch list of any
weaker evidence (unverified, inferred, third-party, build-script, release-matrix), and adds the
variant to its release when the table lacks it. A variant whose list is already "binary" keeps the
table's list; a learned one that disagrees with it is reported by the command, not merged.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from .table import TableError

LEARNED_KEY = "learned"
LEARNED_SOURCE = "learned-binaries"
LINUX_X86_64, LINUX_AARCH64, WINDOWS = "linux-x86_64", "linux-aarch64", "windows"
_VARIANT = re.compile(r"^cu(\d{2,3})$")


def cuda_of_variant(name: str) -> Optional[str]:
    """cu130 -> "13.0", cu118 -> "11.8", cu92 -> "9.2"; None for a name that is not a CUDA variant."""
    match = _VARIANT.match(name)
    if match is None:
        return None
    digits = match.group(1)
    return f"{digits[:-1]}.{digits[-1]}"


def learned_entry(release: str, variant: str, platform: str, arch_list: Sequence[str], ptx: Sequence[str],
                  wheel: str, sha256: str, learned_at: str) -> dict[str, Any]:
    return {
        "release": release, "variant": variant, "platform": platform, "arch_list": list(arch_list), "ptx": list(ptx),
        "wheel": wheel, "sha256": sha256, "learned_at": learned_at,
    }


def with_learned(overlay: Optional[dict[str, Any]], entry: dict[str, Any], empty: dict[str, Any]) -> dict[str, Any]:
    """The overlay (``empty`` when there is none) with ``entry`` in place of any earlier one for the
    same release, variant and platform."""
    base = dict(overlay) if overlay is not None else dict(empty)
    key = (entry["release"], entry["variant"], entry["platform"])
    kept = [e for e in base.get(LEARNED_KEY) or [] if isinstance(e, dict) and (e.get("release"), e.get("variant"), e.get("platform")) != key]
    base[LEARNED_KEY] = kept + [entry]
    return base


def _entries(overlay: dict[str, Any]) -> list[dict[str, Any]]:
    learned = overlay.get(LEARNED_KEY)
    if learned is None:
        return []
    if not isinstance(learned, list) or not all(isinstance(e, dict) for e in learned):
        raise TableError(f"overlay: {LEARNED_KEY!r} must be a list of objects")
    for e in learned:
        for key in ("release", "variant", "platform", "wheel"):
            if not isinstance(e.get(key), str):
                raise TableError(f"overlay: a learned entry's {key!r} must be a string")
        for key in ("arch_list", "ptx"):
            if not isinstance(e.get(key), list) or not all(isinstance(v, str) for v in e[key]):
                raise TableError(f"overlay: a learned entry's {key!r} must be a list of strings")
    return learned


def apply_learned(merged: dict[str, Any], overlay: dict[str, Any]) -> None:
    """Merge the overlay's learned arch lists into the table's JSON (in place); TableError when the
    overlay's learned entries are malformed. Entries for a release the table does not know are skipped."""
    learned = _entries(overlay)
    if not learned:
        return
    by_version = {r.get("version"): r for r in merged.get("pytorch_releases", []) if isinstance(r, dict)}
    for entry in learned:
        release = by_version.get(entry["release"])
        if release is None:
            continue
        build = {"arch_list": entry["arch_list"], "ptx": entry["ptx"], "evidence": "binary", "source": LEARNED_SOURCE,
                 "note": f"read from {entry['wheel']} by `cudadoctor table learn`"}
        variant = next((v for v in release.get("variants", []) if v.get("name") == entry["variant"]), None)
        if variant is None:  # a variant the table lacks: its own list stays unknown until an x86_64 wheel is learned
            cuda = cuda_of_variant(entry["variant"])
            if cuda is None:
                continue
            variant = {"name": entry["variant"], "cuda": cuda, "cudnn": None, "platforms": [], "arch_list": [], "ptx": [],
                       "evidence": "unverified", "source": LEARNED_SOURCE, "note": "added by `cudadoctor table learn`"}
            release.setdefault("variants", []).append(variant)
            release["variants"].sort(key=lambda v: tuple(int(p) for p in str(v.get("cuda", "0")).split(".") if p.isdigit()))
        platforms = variant.get("platforms")
        covered = isinstance(platforms, list) and (
            entry["platform"] in platforms or ("linux" in platforms and entry["platform"].startswith("linux"))
        )
        if isinstance(platforms, list) and not covered:
            platforms.append(entry["platform"])  # a wheel was read for it: it is published there
        # The variant's own list is its x86_64 (and Windows) wheels'; other platforms' are platform_builds.
        if entry["platform"] == LINUX_AARCH64 or entry["platform"] in (variant.get("platform_builds") or {}):
            builds = variant.setdefault("platform_builds", {})
            if (builds.get(entry["platform"]) or {}).get("evidence") != "binary":
                builds[entry["platform"]] = build
            continue
        if variant.get("evidence") != "binary":
            variant.update(build)
    merged.setdefault("sources", {})[LEARNED_SOURCE] = {
        "document": "wheels read by `cudadoctor table learn` (the .nv_fatbin sections of torch/lib/libtorch_cuda*.so)",
        "section": "; ".join(f"{e['wheel']} (sha256 {str(e.get('sha256', ''))[:12]}, {e.get('learned_at', '')})" for e in learned),
    }
