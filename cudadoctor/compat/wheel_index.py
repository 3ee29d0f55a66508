"""Read PyTorch's wheel index (the ``torch/`` project page) and derive what the table does not know.

Pure: the page comes in as bytes with its content type (``probe/wheel_index.py`` fetches it). Both
index formats are read: PEP 691 JSON (``application/vnd.pypi.simple.v1+json``) and PEP 503 HTML (one
anchor per file). Wheel names are parsed with ``packaging.utils.parse_wheel_filename``; the local
version label (``+cu130``) is the variant and the platform tag the platform.

What the index cannot say -- which GPUs a wheel carries code for -- is inferred for a (release,
variant) the table lacks: from the nearest earlier release's variant of the same CUDA version, else
from the nearest lower CUDA version of the same major, and marked ``evidence: "inferred"`` with
``inferred_from`` naming where it came from. Nothing to infer from: ``evidence: "unverified"``.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any, Iterable, Optional

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion

from ..model.record import record
from .table import TableError

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
# Ask for PEP 691 JSON first, then the HTML forms (PEP 691's content negotiation).
ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
OVERLAY_SOURCE = "wheel-index-overlay"
OVERLAY_FORMAT = "cudadoctor-table-overlay"
OVERLAY_VERSION = 1

_VARIANT_RE = re.compile(r"^cu(\d{2})(\d{1,2})$")


class IndexPageError(ValueError):
    """The page is not a readable project index; the message is one line."""


@record
class IndexWheel:
    """One torch wheel the index lists."""

    filename: str
    release: str  # "2.16"
    version: str  # "2.16.1" (the public version, without the local label)
    variant: Optional[str]  # "cu130"; None for a wheel without a CUDA label (cpu, rocm, ...)
    platform: Optional[str]  # "linux-x86_64" | "linux-aarch64" | "windows"; None for others (macOS)


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self.anchors = 0
        self._in_anchor = False
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        if tag == "a":
            self.anchors += 1
            self._in_anchor = True
            self._text = ""
            href = dict(attrs).get("href") or ""
            name = href.split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            if name.endswith(".whl"):
                self.names.append(_unquote(name))
                self._in_anchor = False  # the href named it

    def handle_data(self, data: str) -> None:
        if self._in_anchor:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._in_anchor:
            text = self._text.strip()
            if text.endswith(".whl"):
                self.names.append(text)
            self._in_anchor = False


def _unquote(text: str) -> str:
    # Percent-encoding in hrefs ("torch-2.12.0%2Bcu130-..."); urllib.parse is pure but the layer rules
    # forbid urllib in compat, and only %XX escapes occur in file names.
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def page_filenames(body: bytes, content_type: str) -> list[str]:
    """The file names a project page lists; IndexPageError when it is not an index page."""
    kind = content_type.split(";", 1)[0].strip().lower()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise IndexPageError("the index page is not UTF-8 text") from None
    if kind == JSON_TYPE or kind == "application/json":
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise IndexPageError("the index page is not valid JSON (truncated?)") from None
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, list) or not isinstance(data.get("meta"), dict):
            raise IndexPageError("the JSON page is not a PEP 691 project page (no meta/files)")
        return [f["filename"] for f in files if isinstance(f, dict) and isinstance(f.get("filename"), str)]
    if kind in ("text/html", "application/vnd.pypi.simple.v1+html", ""):
        parser = _Anchors()
        parser.feed(text)
        parser.close()
        if "</html>" not in text.lower() and "</body>" not in text.lower():
            raise IndexPageError("the HTML page ends early (truncated download?)")
        if not parser.anchors:
            raise IndexPageError("the HTML page lists no files: not a PEP 503 project page")
        return parser.names
    raise IndexPageError(f"the server sent {kind or 'no content type'}, not an index page")


def platform_of(tag_platform: str) -> Optional[str]:
    if tag_platform.endswith("_x86_64") and ("linux" in tag_platform):
        return "linux-x86_64"
    if tag_platform.endswith("_aarch64") and ("linux" in tag_platform):
        return "linux-aarch64"
    if tag_platform.startswith("win_amd64") or tag_platform == "win64":
        return "windows"
    return None


def torch_wheels(filenames: Iterable[str]) -> list[IndexWheel]:
    """The torch wheels among the names (others, and names that do not parse, are skipped)."""
    wheels = []
    for name in filenames:
        try:
            project, version, _build, tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion):
            continue
        if project != "torch" or version.is_prerelease or version.is_devrelease or len(version.release) < 2:
            continue
        local = version.local or ""
        variant = local if _VARIANT_RE.match(local) else None
        platforms = {platform_of(tag.platform) for tag in tags}
        major, minor = version.release[0], version.release[1]
        patch = version.release[2] if len(version.release) > 2 else 0
        for platform in sorted(platforms, key=str):
            wheels.append(IndexWheel(name, f"{major}.{minor}", f"{major}.{minor}.{patch}", variant, platform))
    return wheels


def cuda_of(variant: str) -> str:
    match = _VARIANT_RE.match(variant)
    if not match:
        raise ValueError(variant)
    return f"{int(match.group(1))}.{int(match.group(2))}"


def _key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


@record
class Seen:
    """What the index holds for one (release, variant)."""

    release: str
    variant: str
    versions: tuple[str, ...]  # the patch releases with the variant, ascending
    platforms: tuple[str, ...]


def seen_variants(wheels: Iterable[IndexWheel]) -> tuple[dict[str, tuple[str, ...]], list[Seen]]:
    """(every patch release per minor, each CUDA (release, variant) with its patches and platforms)."""
    patches: dict[str, set[str]] = {}
    groups: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for wheel in wheels:
        patches.setdefault(wheel.release, set()).add(wheel.version)
        if wheel.variant is None or wheel.platform is None:
            continue
        versions, platforms = groups.setdefault((wheel.release, wheel.variant), (set(), set()))
        versions.add(wheel.version)
        platforms.add(wheel.platform)
    seen = [
        Seen(release, variant, tuple(sorted(v, key=_key)), tuple(sorted(p)))
        for (release, variant), (v, p) in groups.items()
    ]
    seen.sort(key=lambda s: (_key(s.release), _key(cuda_of(s.variant))))
    return {r: tuple(sorted(v, key=_key)) for r, v in patches.items()}, seen


def _verified(variant: dict[str, Any]) -> bool:
    """A variant whose arch list a source settles: only those lend theirs (never an inferred one)."""
    return variant.get("evidence") not in ("unverified", "inferred") and bool(variant.get("arch_list"))


def infer_from(
    releases: list[dict[str, Any]], release: str, cuda: str
) -> Optional[tuple[dict[str, Any], str]]:
    """The variant an unknown (release, CUDA) borrows its arch list from, and "X.Y cuNNN" naming it:
    the nearest earlier release's variant of the same CUDA, else the nearest lower CUDA of the same
    major (newest release first, then the highest such CUDA)."""
    target, major = _key(release), _key(cuda)[0]
    earlier = sorted((r for r in releases if _key(r["version"]) <= target), key=lambda r: _key(r["version"]), reverse=True)
    for rel in earlier:
        if _key(rel["version"]) == target:
            continue
        for variant in rel["variants"]:
            if variant["cuda"] == cuda and _verified(variant):
                return variant, f"{rel['version']} {variant['name']}"
    for rel in earlier:
        lower = [v for v in rel["variants"] if _key(v["cuda"])[0] == major and _key(v["cuda"]) < _key(cuda) and _verified(v)]
        if lower:
            best = max(lower, key=lambda v: _key(v["cuda"]))
            return best, f"{rel['version']} {best['name']}"
    return None


def derive_overlay(
    table: dict[str, Any], filenames: Iterable[str], *, index_url: str, fetched_at: str, sha256: str
) -> dict[str, Any]:
    """The overlay for what the index holds and the table lacks: new releases, new (release, variant)s,
    newer patch releases. ``table`` is the shipped table's JSON (the overlay never changes its facts)."""
    patches, seen = seen_variants(torch_wheels(filenames))
    if not patches:
        raise IndexPageError("the index page lists no torch wheels")
    releases: list[dict[str, Any]] = json.loads(json.dumps(table.get("pytorch_releases", [])))
    by_version = {r["version"]: r for r in releases}
    driver_minors = {".".join(row["version"].split(".")[:2]) for row in table.get("cuda_releases", [])}
    floors = {row["cuda_major"] for row in table.get("minor_version_compatibility", [])}
    added_releases: list[dict[str, Any]] = []
    added_variants: list[dict[str, Any]] = []
    full_versions: dict[str, str] = {}
    for item in seen:
        cuda = cuda_of(item.variant)
        if cuda not in driver_minors and _key(cuda)[0] not in floors:
            continue  # no driver row and no floor for its major: nothing could judge it
        rel = by_version.get(item.release)
        if rel is None:
            newest = patches[item.release][-1]
            rel = {
                "version": item.release,
                "full_version": newest,
                "released": None,
                "default_variant": None,
                "variants": [],
                "source": OVERLAY_SOURCE,
                "note": "seen on PyTorch's wheel index by `cudadoctor table update`; no source describes it yet",
            }
            by_version[item.release] = rel
            releases.append(rel)
            releases.sort(key=lambda r: _key(r["version"]))
            added_releases.append(rel)
        if any(v["name"] == item.variant for v in rel["variants"]):
            continue
        entry = _inferred_variant(releases, item, cuda, patches[item.release])
        rel["variants"].append(entry)
        rel["variants"].sort(key=lambda v: _key(v["cuda"]))
        if rel not in added_releases:
            added_variants.append(dict(entry, release=item.release))
    for version, known in by_version.items():
        on_index = patches.get(version, ())
        if on_index and rel_is_shipped(version, added_releases) and _key(on_index[-1]) > _key(known["full_version"]):
            full_versions[version] = on_index[-1]
    return {
        "format": OVERLAY_FORMAT,
        "version": OVERLAY_VERSION,
        "index_url": index_url,
        "fetched_at": fetched_at,
        "sha256": sha256,
        "releases": added_releases,
        "variants": added_variants,
        "full_versions": full_versions,
    }


def empty_overlay() -> dict[str, Any]:
    """An overlay that adds nothing from an index (what `table learn` starts from when there is none)."""
    return {"format": OVERLAY_FORMAT, "version": OVERLAY_VERSION, "index_url": None, "fetched_at": None, "sha256": None,
            "releases": [], "variants": [], "full_versions": {}}


def rel_is_shipped(version: str, added: list[dict[str, Any]]) -> bool:
    return all(r["version"] != version for r in added)


def _inferred_variant(releases: list[dict[str, Any]], item: Seen, cuda: str, patches: tuple[str, ...]) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": item.variant, "cuda": cuda}
    found = infer_from(releases, item.release, cuda)
    if found is None:
        entry.update(arch_list=[], ptx=[], cudnn=None, evidence="unverified")
    else:
        donor, named = found
        entry.update(arch_list=list(donor["arch_list"]), ptx=None if donor.get("ptx", []) is None else list(donor.get("ptx", [])), cudnn=None,
                     evidence="inferred", inferred_from=named)
        builds = {
            platform: dict(build, evidence="inferred", source=OVERLAY_SOURCE, note=f"inferred from {named}")
            for platform, build in donor.get("platform_builds", {}).items()
            if platform in item.platforms and build.get("evidence") != "unverified"
        }
        if builds:
            entry["platform_builds"] = builds
    entry["source"] = OVERLAY_SOURCE
    entry["platforms"] = list(item.platforms)
    if item.versions[0] != patches[0]:
        entry["first_patch"] = item.versions[0]
    entry["note"] = f"seen on PyTorch's wheel index for {', '.join(item.versions)}"
    return entry


def merge_overlay(table: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """The shipped table's JSON with the overlay's additions; TableError when the overlay is malformed.
    The merged table still goes through the table's validation (parse_table)."""
    if not isinstance(overlay, dict) or overlay.get("format") != OVERLAY_FORMAT:
        raise TableError("not a cudadoctor table overlay (run `cudadoctor table update --clear`)")
    if overlay.get("version") != OVERLAY_VERSION:
        raise TableError(f"overlay version {overlay.get('version')!r} is not {OVERLAY_VERSION} (run `cudadoctor table update`)")
    merged: dict[str, Any] = json.loads(json.dumps(table))
    releases = merged.setdefault("pytorch_releases", [])
    by_version = {r.get("version"): r for r in releases if isinstance(r, dict)}
    for key in ("releases", "variants"):
        if not isinstance(overlay.get(key), list):
            raise TableError(f"overlay: {key!r} must be a list")
    for rel in overlay["releases"]:
        if not isinstance(rel, dict) or rel.get("version") in by_version:
            continue  # a release the shipped table now knows: its facts win
        releases.append(rel)
        by_version[rel.get("version")] = rel
    for variant in overlay["variants"]:
        if not isinstance(variant, dict):
            raise TableError("overlay: a variant must be an object")
        variant = dict(variant)
        rel = by_version.get(variant.pop("release", None))
        if rel is None or any(v.get("name") == variant.get("name") for v in rel.get("variants", [])):
            continue
        rel["variants"].append(variant)
        rel["variants"].sort(key=lambda v: _key(str(v.get("cuda", "0"))))
    for version, full in (overlay.get("full_versions") or {}).items():
        rel = by_version.get(version)
        if rel is not None and isinstance(full, str) and re.match(r"^\d+\.\d+\.\d+$", full) and _key(full) > _key(rel["full_version"]):
            rel["full_version"] = full
    releases.sort(key=lambda r: _key(str(r.get("version", "0"))))
    from .learned import LEARNED_KEY, apply_learned  # arch lists `table learn` read from wheels

    apply_learned(merged, overlay)
    if overlay.get("index_url"):  # an overlay of `table learn` alone read no index
        merged.setdefault("sources", {})[OVERLAY_SOURCE] = {
            "document": "PyTorch's wheel index, read by `cudadoctor table update`",
            "section": f"torch/ project page fetched {overlay.get('fetched_at')} (sha256 {overlay.get('sha256')}); "
            "arch lists of variants no source describes are inferred",
            "url": str(overlay.get("index_url", "")),
        }
    fetched = str(overlay.get("fetched_at", ""))[:10]
    if re.match(r"^\d{4}-\d{2}-\d{2}$", fetched) and fetched > str(merged.get("updated", "")):
        merged["updated"] = fetched
    merged["overlay"] = {k: overlay.get(k) for k in ("index_url", "fetched_at", "sha256")}
    if overlay.get(LEARNED_KEY):
        merged["overlay"]["learned"] = [e.get("wheel") for e in overlay[LEARNED_KEY] if isinstance(e, dict)]
    return merged


def overlay_changes(overlay: dict[str, Any]) -> list[str]:
    """One line per thing the overlay adds (what `table update --dry-run` prints)."""
    lines = []
    for rel in overlay["releases"]:
        names = ", ".join(_variant_word(v) for v in rel["variants"]) or "no CUDA variant"
        lines.append(f"add PyTorch {rel['version']} ({rel['full_version']}): {names}")
    for variant in overlay["variants"]:
        lines.append(f"add PyTorch {variant['release']} {_variant_word(variant)}")
    for version, full in overlay["full_versions"].items():
        lines.append(f"PyTorch {version}: newest patch release {full}")
    return lines


def _variant_word(variant: dict[str, Any]) -> str:
    how = f"inferred from {variant['inferred_from']}" if variant.get("inferred_from") else "arch list unverified"
    first = f", from {variant['first_patch']}" if variant.get("first_patch") else ""
    return f"{variant['name']} ({how}; {', '.join(variant.get('platforms', []))}{first})"
