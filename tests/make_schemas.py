"""Writes cudadoctor/schemas/{check,recommend,probe,table}.schema.json (JSON Schema draft 2020-12).

The host facts and the target are trees of records, so their part of each schema is derived from
the records' annotations (every field is always written, so every field is required); the
payload around them (report/payload.py, report/table_payload.py) is written out here by hand.
Objects allow additional properties: keys are only ever added, and a newer cudadoctor's output
must still validate against an older schema.

Run after changing a record or a payload:  .venv/bin/python tests/make_schemas.py
(tests/test_schemas.py fails when a committed schema is out of date).
"""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Any, Union

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudadoctor.model.facts import HostFacts  # noqa: E402
from cudadoctor.model.record import fields  # noqa: E402
from cudadoctor.model.snapshot import field_types  # noqa: E402
from cudadoctor.model.target import Target  # noqa: E402

DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE = "https://cudadoctor.invalid/schemas"  # an identifier, never fetched (.invalid cannot resolve)
STR = {"type": "string"}
NSTR = {"type": ["string", "null"]}
INT = {"type": "integer"}
NINT = {"type": ["integer", "null"]}
BOOL = {"type": "boolean"}
STRS = {"type": "array", "items": STR}


def obj(properties: dict[str, Any], required: Any = None, description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if description:
        schema["description"] = description
    schema["properties"] = properties
    schema["required"] = list(properties) if required is None else list(required)
    schema["additionalProperties"] = True
    return schema


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def record_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    """A $ref to the schema of a record class, adding it (and the records it holds) to defs."""
    name = cls.__name__
    if name not in defs:
        defs[name] = {}  # placeholder: a record that (indirectly) holds itself
        hints = field_types(cls)  # the records import typing for type checkers only: resolved as the snapshot decoder resolves them
        properties = {f.name: type_schema(hints[f.name], defs) for f in fields(cls)}
        defs[name] = obj(properties, description=(cls.__doc__ or "").strip().split("\n")[0])
    return {"$ref": f"#/$defs/{name}"}


def type_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = type_schema(args[0], defs) if len(args) == 1 else {"anyOf": [type_schema(a, defs) for a in args]}
        if "type" in inner and isinstance(inner["type"], str) and len(inner) == 1:
            return {"type": [inner["type"], "null"]}
        return nullable(inner)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0], defs)}
        return {
            "type": "array",
            "prefixItems": [type_schema(a, defs) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }
    if isinstance(tp, type) and hasattr(tp, "__record_fields__"):
        return record_schema(tp, defs)
    simple = {str: STR, int: INT, float: {"type": "number"}, bool: BOOL}
    if tp in simple:
        return dict(simple[tp])
    if tp is Any:
        return {}
    raise TypeError(f"no schema for {tp!r}")


def document(name: str, title: str, body: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    schema = {"$schema": DIALECT, "$id": f"{BASE}/{name}.schema.json", "title": title}
    schema.update(body)
    if defs:
        schema["$defs"] = dict(sorted(defs.items()))
    return schema


def action_def() -> dict[str, Any]:
    return obj(
        {
            "action": {"type": "string", "description": "upgrade-driver | use-release | use-variant | make-gpu-visible | install-driver | plan-with-what-if | use-cpu-wheels"},
            "min_driver": NSTR,
            "full_driver": NSTR,
            "torch": NSTR,
            "variant": NSTR,
            "cuda": NSTR,
            "image": NSTR,
            "support": NSTR,
            "wheel_index_url": NSTR,
            "pip_command": NSTR,
        },
        description="A fix as data: what to do, and the values it needs (null when they do not apply).",
    )


# How sure a recommendation is (issue 9): the platform judged for, and what the table does not settle.
CERTAINTY: dict[str, Any] = {
    "platform": {**NSTR, "description": "The host platform the choice was made for (linux-x86_64, linux-aarch64, windows); null: unknown."},
    "unverified_variants": {"type": "array", "items": STR, "description": "The release's variants nothing settles (never offered)."},
    "inferred_variants": {"type": "array", "items": STR, "description": "Variants whose arch list `table update` inferred."},
    "notes": {"type": "array", "items": STR, "description": "What the choice rests on that is less than a read binary."},
}


def rejection_def() -> dict[str, Any]:
    return obj({"variant": STR, "reason": STR})


def recommendation_def() -> dict[str, Any]:
    return obj(
        {
            "image": NSTR,
            "variant": STR,
            "torch": STR,
            "cuda": NSTR,
            "family": STR,
            "support": {"enum": ["full", "minor-compat", "forward-compat", "unknown"]},
            "wheel_index_url": NSTR,
            "pip_command": {**NSTR, "description": "The pip line in the form PyTorch documents for the release (--index-url from 2.0, "
                            "--extra-index-url for 1.11-1.13, -f for 1.2-1.10); null for a non-default 1.0/1.1 wheel: see wheel_page_url."},
            "install_style": {"enum": ["index-url", "extra-index-url", "find-links", "wheel-page"],
                              "description": "How PyTorch's pages install the release's wheels."},
            "wheel_page_url": {**NSTR, "description": "The find-links page the documented install names (1.0-1.10); null from 1.11."},
            "why": STR,
            "evidence": {**NSTR, "description": "How the chosen build's arch list is known (docs/table.md: binary, build-script, release-matrix, third-party, inferred); null when unstated or not a wheel build."},
            "install_version": {**NSTR, "description": "The patch release to install: the first that has the variant, else the newest."},
            "first_patch": {**NSTR, "description": "Set when the variant is absent from the minor's earlier patch releases."},
            **CERTAINTY,
            "rejected": {"type": "array", "items": {"$ref": "#/$defs/Rejection"}},
            "newest_release": nullable(obj(
                {"torch": STR, "why": STR, "fixes": STRS, "actions": {"type": "array", "items": {"$ref": "#/$defs/Action"}}},
                description="Set when this is the newest release that runs here, chosen because nothing was asked for: "
                "the newest release, why it does not run, and what would run it.",
            )),
        },
        required=["image", "variant", "torch", "cuda", "family", "support", "wheel_index_url", "pip_command", "why", "evidence",
                  "install_version", "first_patch", *CERTAINTY, "rejected"],
        description="The variant (and image) that fits.",
    )


def fix_def() -> dict[str, Any]:
    return obj(
        {"text": STR, "code": {**NSTR, "description": "The finding the fix comes from; null: the recommendation's own."},
         "actions": {"type": "array", "items": {"$ref": "#/$defs/Action"}}},
        description="One thing to do, worded and as data.",
    )


def answer_def() -> dict[str, Any]:
    fixes = {"type": "array", "items": {"$ref": "#/$defs/Fix"}}
    build = obj(
        {"torch": STR, "variant": STR, "cuda": NSTR, "image": NSTR, "support": NSTR, "wheel_index_url": NSTR, "pip_command": NSTR,
         "needs_driver": {**NSTR, "description": "The driver the build needs, when the host's driver is not known."},
         "wheel_page_url": {**NSTR, "description": "The find-links page PyTorch names for the release's wheels (1.0-1.10)."}},
        description="The build to use.",
    )
    return obj(
        {
            "verdict": {"enum": ["ok", "warn", "fail"]},
            "kind": {"enum": ["use", "runs", "fix-first", "use-instead", "fix"], "description": "use: it runs, use the build; "
                     "runs: the build asked for runs, another fits better; fix-first: fix the problem, then use the build; "
                     "use-instead: the build asked for does not run here, this one does; fix: nothing runs as the host is."},
            "problem": nullable(obj({"code": STR, "title": STR})),
            "fix": nullable({"$ref": "#/$defs/Fix"}),
            "fixes": fixes,
            "build": nullable(build),
            "newest_that_runs": {**BOOL, "description": "The build is the newest release that runs here (nothing was asked for)."},
            "asked_release": {**NSTR, "description": "The release asked for, when the build is another release."},
            "other_fixes": {**fixes, "description": "What would make the release asked for run."},
            "without_cuda": {**fixes, "description": "With no driver or GPU: what the newest build needs, planning, CPU wheels."},
            "newer": nullable({"$ref": "#/$defs/Fix"}),
            "explained": {**NSTR, "description": "Minor-version compatibility in one plain sentence, where the build relies on it."},
            "multi_gpu": {**nullable({"$ref": "#/$defs/Fix"}), "description": "How a multi-GPU job's GPUs talk (the multi-gpu-path finding)."},
        },
        description="The report's one thing to do, decided once (the text report prints the same).",
    )


def no_recommendation_def() -> dict[str, Any]:
    return obj(
        {
            "torch": STR,
            "family": STR,
            "why": STR,
            "rejected": {"type": "array", "items": {"$ref": "#/$defs/Rejection"}},
            "fixes": {"type": "array", "items": STR, "description": "The fixes, worded."},
            "actions": {"type": "array", "items": {"$ref": "#/$defs/Action"}, "description": "The fixes as data."},
            "alternative": nullable({"$ref": "#/$defs/Recommendation"}),
            **CERTAINTY,
        },
        description="Why nothing fits, and what would fix it.",
    )


def table_ref_def() -> dict[str, Any]:
    return obj({"path": STR, "updated": STR, "schema": INT}, description="The table the verdicts came from.")


def shared_defs() -> dict[str, Any]:
    return {
        "Action": action_def(),
        "Rejection": rejection_def(),
        "Recommendation": recommendation_def(),
        "NoRecommendation": no_recommendation_def(),
        "TableRef": table_ref_def(),
        "Fix": fix_def(),
        "Answer": answer_def(),
    }


def check_schema() -> dict[str, Any]:
    defs = shared_defs()
    host = record_schema(HostFacts, defs)
    target = record_schema(Target, defs)
    defs["Finding"] = obj(
        {
            "code": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
            "severity": {"enum": ["ok", "info", "warn", "fail"]},
            "title": STR,
            "detail": STR,
            "hint": STR,
            "source": STR,
            "subject": STR,
            "group": STR,
            "gpu_index": NINT,
            "actions": {"type": "array", "items": {"$ref": "#/$defs/Action"}},
        },
        description="One checked fact; codes are listed in docs/findings.md.",
    )
    body = obj(
        {
            "schema": {"const": 1},
            "verdict": {"enum": ["ok", "warn", "fail"]},
            "answer": {"$ref": "#/$defs/Answer"},
            "host": host,
            "target": nullable(target),
            "findings": {"type": "array", "items": {"$ref": "#/$defs/Finding"}},
            "recommendation": nullable({"$ref": "#/$defs/Recommendation"}),
            "no_recommendation": nullable({"$ref": "#/$defs/NoRecommendation"}),
            "table": {"$ref": "#/$defs/TableRef"},
        },
        description="`cudadoctor check --json`: exactly one of recommendation and no_recommendation is null.",
    )
    return document("check", "cudadoctor check --json", body, defs)


def recommend_schema() -> dict[str, Any]:
    defs = shared_defs()
    body = obj(
        {
            "schema": {"const": 1},
            "recommendation": nullable({"$ref": "#/$defs/Recommendation"}),
            "no_recommendation": nullable({"$ref": "#/$defs/NoRecommendation"}),
            "table": {"$ref": "#/$defs/TableRef"},
        },
        description="`cudadoctor recommend --format json`.",
    )
    return document("recommend", "cudadoctor recommend --format json", body, defs)


def probe_schema() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    host = record_schema(HostFacts, defs)
    body = obj(
        {"schema": {"const": 1}, "kind": {"const": "cudadoctor-host-snapshot"}, "host": host},
        description="A host snapshot: `cudadoctor probe --json` / `--output FILE`, read back by --snapshot FILE.",
    )
    return document("probe", "cudadoctor probe (a host snapshot)", body, defs)


def table_schema() -> dict[str, Any]:
    source_ref = obj({"key": STR, "cite": STR})
    variant = obj(
        {
            "name": STR,
            "cuda": STR,
            "default": BOOL,
            "arch_list": STRS,
            "ptx": STRS,
            "ptx_unknown": BOOL,
            "cudnn": NSTR,
            "min_driver_linux": NSTR,
            "min_driver_windows": NSTR,
            "minor_compat_driver_linux": NSTR,
            "wheel_index_url": NSTR,
            "pip_command": NSTR,
            "wheel_page_url": NSTR,
            "seen_on": NSTR,
            "images": STRS,
            "evidence": NSTR,
            "note": NSTR,
            "source": {"$ref": "#/$defs/SourceRef"},
        }
    )
    release = obj(
        {
            "version": STR,
            "full_version": STR,
            "released": NSTR,
            "default_variant": NSTR,
            "install_style": {"enum": ["index-url", "extra-index-url", "find-links", "wheel-page"]},
            "note": NSTR,
            "variants": {"type": "array", "items": {"$ref": "#/$defs/Variant"}},
            "source": {"$ref": "#/$defs/SourceRef"},
        },
        description="`table --torch X.Y --json`: one release.",
    )
    gpu = obj(
        {
            "cc": STR,
            "architecture": NSTR,
            "features": STRS,
            "last_driver_branch": nullable(obj(
                {
                    "branch": {"type": ["integer", "null"], "description": "The last NVIDIA driver branch that supports it (470); null: still supported."},
                    "architecture": STR,
                    "evidence": {"enum": ["release-notes", "announced"]},
                    "note": STR,
                    "source": {"$ref": "#/$defs/SourceRef"},
                },
                description="NVIDIA's last driver branch for the architecture; null when the table records none for this compute capability.",
            )),
            "pytorch_builds": {"type": "array", "items": obj({"torch": STR, "sass": STRS, "ptx_only": STRS})},
            "name": NSTR,
            "aliases": STRS,
            "unverified_aliases": STRS,
            "brand_class": NSTR,
            "forward_compat": NSTR,
            "source": nullable({"$ref": "#/$defs/SourceRef"}),
            "products": STRS,
        },
        description="`table --gpu NAME --json`: one product (name set) or a bare compute capability (name null).",
    )
    gpus = {
        "type": "array",
        "description": "`table --gpus --json`: the GPU catalog.",
        "items": obj(
            {"name": STR, "cc": STR, "architecture": NSTR, "brand_class": STR, "aliases": STRS, "unverified_aliases": STRS, "source": STR}
        ),
    }
    sources = {
        "type": "array",
        "description": "`table --sources --json`: every source and what cites it.",
        "items": obj({"key": STR, "document": STR, "section": STR, "url": STR, "cited_by": INT, "examples": STRS}),
    }
    summary = obj(
        {
            "valid": {"const": True},
            "path": STR,
            "updated": STR,
            "cuda_releases": INT,
            "pytorch_releases": INT,
            "gpus": INT,
            "image_families": INT,
            "sources": INT,
        },
        description="`table --validate FILE --json`.",
    )
    family = obj(
        {
            "name": STR,
            "repository": STR,
            "tag_template": STR,
            "description": STR,
            "source": STR,
            "offers": nullable({"type": "object", "additionalProperties": STRS}),
        }
    )
    whole = obj(
        {
            "schema": {"const": 1},
            "updated": STR,
            "sources": {"type": "object"},
            "cuda_releases": {"type": "array", "items": {"type": "object"}},
            "pytorch_releases": {"type": "array", "items": {"type": "object"}},
            "gpus": {"type": "array", "items": {"type": "object"}},
            "image_families": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"$ref": "#/$defs/Family"},
                        obj({"name": STR, "kind": {"const": "ngc"}, "repository": STR, "tag_template": STR},
                            description="An NGC family (one tag per monthly release: ngc_pytorch_releases), as the file has it."),
                    ]
                },
            },
            "ngc_pytorch_releases": {"type": "array", "items": {"type": "object"}},
            "last_driver_branches": {"type": "array", "items": {"type": "object"},
                                     "description": "The last driver branch per architecture (docs/table.md); empty when the table records none."},
        },
        description="`table --json`: the table as loaded (data/compat_table.json; docs/table.md), with any families added.",
    )
    defs = {
        "SourceRef": source_ref,
        "Variant": variant,
        "Release": release,
        "Gpu": gpu,
        "Gpus": gpus,
        "Sources": sources,
        "ValidationSummary": summary,
        "Family": family,
        "WholeTable": whole,
    }
    body = {
        "description": "`cudadoctor table ... --json`: one of its views, by the option given.",
        "anyOf": [{"$ref": f"#/$defs/{name}"} for name in ("WholeTable", "Release", "Gpu", "Gpus", "Sources", "ValidationSummary")],
    }
    return document("table", "cudadoctor table --json", body, defs)


SCHEMAS = {"check": check_schema, "recommend": recommend_schema, "probe": probe_schema, "table": table_schema}


def render(name: str) -> str:
    return json.dumps(SCHEMAS[name](), indent=2) + "\n"


def main() -> None:
    out = ROOT / "cudadoctor" / "schemas"
    out.mkdir(exist_ok=True)
    for name in SCHEMAS:
        (out / f"{name}.schema.json").write_text(render(name), encoding="utf-8")
        print(f"wrote {out / f'{name}.schema.json'}")


if __name__ == "__main__":
    main()
