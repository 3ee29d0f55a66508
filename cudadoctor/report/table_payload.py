"""Views of the compatibility table for `cudadoctor table`: pure functions from the table to plain data.

The rich renderer (report/table_text.py) and `--json` both read these, so what a person sees and what
a script gets are the same facts.
"""

from __future__ import annotations

from typing import Any, Optional

from ..compat.table import CompatTable, GpuModel, ImageFamily, PytorchRelease, WheelVariant
from ..model.versions import ComputeCapability


def _source(table: CompatTable, key: str) -> dict[str, str]:
    return {"key": key, "cite": table.cite(key)}


def family_view(family: ImageFamily) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": family.name,
        "repository": family.repository,
        "tag_template": family.tag_template,
        "description": family.description,
        "source": family.source,
        # null: every variant of every release (the key is always there, as every documented key is)
        "offers": {version: list(variants) for version, variants in family.offers} if family.offers else None,
    }
    return data


def whole_table_view(table: CompatTable) -> dict[str, Any]:
    """The table as loaded (the JSON file), with any user families added."""
    data = dict(table.raw) if isinstance(table.raw, dict) else {}
    # The NGC families (kind "ngc") are kept as the file has them: their releases are ngc_pytorch_releases.
    ngc = [f for f in data.get("image_families") or () if isinstance(f, dict) and f.get("kind") == "ngc"]
    data["image_families"] = [family_view(f) for f in table.image_families] + ngc
    data.setdefault("ngc_pytorch_releases", [])  # documented, so present even when a table has none
    data.setdefault("last_driver_branches", [])
    return data


def variant_view(table: CompatTable, release: PytorchRelease, variant: WheelVariant) -> dict[str, Any]:
    full = table.min_driver_full(variant.cuda)
    floor = table.minor_compat_floor(variant.cuda.major)
    images = [
        family.reference(release, variant)
        for family in table.image_families
        if variant.name in family.variants_for(release)
    ]
    return {
        "name": variant.name,
        "cuda": str(variant.cuda.major_minor),
        "default": variant.name == release.default_variant,
        "arch_list": [str(cc) for cc in variant.arch_list],
        "ptx": [str(cc) for cc in variant.ptx],
        "ptx_unknown": variant.ptx_unknown,  # no binary or equal source says what PTX it carries
        "cudnn": variant.cudnn,
        "min_driver_linux": str(full.min_driver_linux) if full else None,
        # None where Table 3 prints N/A, and where the variant is not published for Windows at all.
        "min_driver_windows": str(full.min_driver_windows)
        if full and full.min_driver_windows and variant.available_on("windows")
        else None,
        "minor_compat_driver_linux": str(floor.min_driver_linux) if floor else None,
        "wheel_index_url": table.index_url_of(variant),
        "seen_on": variant.seen_on or None,  # a variant from an index: "the wheel index HOST, read DATE"
        "images": images,
        "evidence": variant.evidence,
        "note": variant.note,
        "source": _source(table, variant.source),
        "verified": variant.verified,
        "platforms": list(variant.platforms),  # empty: not restricted on record
        "first_patch": variant.first_patch,
        "install_version": release.install_version(variant),
        # The pip line in the form PyTorch documents for the release (None: download from wheel_page_url).
        "pip_command": table.install_command(release, variant),
        "wheel_page_url": table.wheel_page_url(release, variant),
        "inferred_from": variant.inferred_from or None,
        "platform_builds": [
            {
                "platform": build.platform,
                "arch_list": [str(cc) for cc in build.arch_list],
                "ptx": [str(cc) for cc in build.ptx],
                "ptx_unknown": build.ptx_unknown,
                "evidence": build.evidence,
                "note": build.note,
                "source": _source(table, build.source),
            }
            for build in variant.platform_builds
        ],
    }


def release_view(table: CompatTable, release: PytorchRelease) -> dict[str, Any]:
    return {
        "version": release.version,
        "full_version": release.full_version,
        "released": release.released,
        "default_variant": release.default_variant,
        "default_wheel_platforms": list(release.default_wheel_platforms),
        "install_style": release.install_style,
        "unverified_variants": list(release.unverified_variants),
        "inferred_variants": list(release.inferred_variants),
        "note": release.note,
        "variants": [variant_view(table, release, v) for v in release.variants],
        "source": _source(table, release.source),
    }


def gpu_view(table: CompatTable, model: Optional[GpuModel], cc: ComputeCapability) -> dict[str, Any]:
    """One product (or a bare compute capability) and every PyTorch build that carries code for it."""
    info = table.cc_info(cc)
    builds = []
    for release in table.pytorch_releases:
        runs = {v.name: v.coverage(cc) for v in release.variants}
        builds.append(
            {
                "torch": release.version,
                "sass": [name for name, how in runs.items() if how == "sass"],
                "ptx_only": [name for name, how in runs.items() if how == "ptx"],
            }
        )
    data: dict[str, Any] = {
        "cc": str(cc),
        "architecture": model.architecture if model else (info.architecture if info else None),
        "features": [f.name for f in table.features if cc >= f.min_cc],
        "last_driver_branch": _last_branch_view(table, cc),
        "pytorch_builds": builds,
        # Every key is always present: a bare compute capability has no name, a product no products.
        "name": None,
        "aliases": [],
        "unverified_aliases": [],
        "brand_class": None,
        "forward_compat": None,
        "source": None,
        "products": [],
    }
    if model is not None:
        data.update(
            {
                "name": model.name,
                "aliases": list(model.aliases),
                "unverified_aliases": list(model.unverified_aliases),
                "brand_class": model.brand_class,
                "forward_compat": _forward_compat_class(table, model.brand_class),
                "source": _source(table, model.source),
            }
        )
    else:
        data["products"] = [m.name for m in table.gpus if m.cc == cc]
    return data


def _last_branch_view(table: CompatTable, cc: ComputeCapability) -> Optional[dict[str, Any]]:
    """The last driver branch that supports this compute capability (branch null: still supported);
    None when the table records none for it."""
    row = table.last_branch_for(cc)
    if row is None:
        return None
    return {"branch": row.last_branch, "architecture": row.architecture, "evidence": row.evidence,
            "note": row.note, "source": _source(table, row.source)}


def _forward_compat_class(table: CompatTable, brand_class: str) -> Optional[str]:
    forward = table.forward_compat
    if forward is None:
        return None
    if brand_class in forward.brand_classes:
        return "supported"
    if brand_class in forward.select_brand_classes:
        return "select SKUs only"
    return "not supported"


def gpus_view(table: CompatTable) -> list[dict[str, Any]]:
    return [
        {
            "name": m.name,
            "cc": str(m.cc),
            "architecture": m.architecture,
            "brand_class": m.brand_class,
            "aliases": list(m.aliases),
            "unverified_aliases": list(m.unverified_aliases),
            "source": m.source,
        }
        for m in table.gpus
    ]


def sources_view(table: CompatTable) -> list[dict[str, Any]]:
    """Every source with what cites it: the facts' provenance at a glance."""
    uses: dict[str, list[str]] = {s.key: [] for s in table.sources}

    def cite(key: str, what: str) -> None:
        uses.setdefault(key, []).append(what)

    for row in table.cuda_releases:
        cite(row.source, f"CUDA {row.version} driver row")
    for floor in table.minor_version_compat:
        cite(floor.source, f"CUDA {floor.cuda_major}.x minor-version floor")
    for toolkit in table.toolkit_architectures:
        cite(toolkit.source, f"CUDA {toolkit.cuda} architectures")
    for info in table.compute_capabilities:
        cite(info.source, f"compute capability {info.cc}")
    for model in table.gpus:
        cite(model.source, f"GPU {model.name}")
        for key in model.alias_sources:
            cite(key, f"NVML names of {model.name}")
    for release in table.pytorch_releases:
        cite(release.source, f"PyTorch {release.version}")
        for variant in release.variants:
            cite(variant.source, f"PyTorch {release.version} {variant.name}")
    for family in table.image_families:
        cite(family.source, f"image family {family.name}")
    if table.forward_compat:
        cite(table.forward_compat.source, "forward compatibility")
    for feature in table.features:
        cite(feature.source, f"feature {feature.name}")
    for ended in table.last_branches:
        cite(ended.source, f"last driver branch of {ended.architecture}")
    by_key = {s.key: s for s in table.sources}
    return [
        {
            "key": key,
            "document": by_key[key].document if key in by_key else key,
            "section": by_key[key].section if key in by_key else "",
            "url": by_key[key].url if key in by_key else "",
            "cited_by": len(what),
            "examples": what[:3],
        }
        for key, what in uses.items()
    ]


def validation_summary(table: CompatTable) -> dict[str, Any]:
    return {
        "valid": True,
        "path": table.path,
        "updated": table.updated,
        "cuda_releases": len(table.cuda_releases),
        "pytorch_releases": len(table.pytorch_releases),
        "gpus": len(table.gpus),
        "image_families": len(table.image_families),  # the wheel families; the NGC ones are counted apart
        "ngc_families": len(table.ngc_families),
        "sources": len(table.sources),
    }
