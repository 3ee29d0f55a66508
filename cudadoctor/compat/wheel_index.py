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
from typing import Any, Callable, Iterable, Optional

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion

from ..model.numbers import MAX_DIGITS
from ..model.record import record
from ..model.redact import redact_url
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


TOO_SLOW = "the page could not be read within the deadline (--timeout)"
# A version part longer than this is no release (numbers.MAX_DIGITS; int() refuses 4300+ digits anyway).
_LONG_NUMBER = re.compile(r"[0-9]{%d,}" % (MAX_DIGITS + 1))


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


HTML_PIECE = 256 * 1024  # the HTML reader is fed this much at a time, the deadline checked between pieces


def page_filenames(body: bytes, content_type: str, in_time: Optional[Callable[[], bool]] = None) -> list[str]:
    """The file names a project page lists; IndexPageError when it is not an index page, or when
    ``in_time`` (the caller's deadline) turns false while the page is read."""
    kind = content_type.split(";", 1)[0].strip().lower()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise IndexPageError("the index page is not UTF-8 text") from None
    if in_time is not None and not in_time():
        raise IndexPageError(TOO_SLOW)
    if kind == JSON_TYPE or kind == "application/json":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # ValueError: JSONDecodeError, and an integer past CPython's digit limit
            raise IndexPageError("the index page is not valid JSON (truncated?)") from None
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, list) or not isinstance(data.get("meta"), dict):
            raise IndexPageError("the JSON page is not a PEP 691 project page (no meta/files)")
        return [f["filename"] for f in files if isinstance(f, dict) and isinstance(f.get("filename"), str)]
    if kind in ("text/html", "application/vnd.pypi.simple.v1+html", ""):
        parser = _Anchors()
        for start in range(0, len(text), HTML_PIECE):
            if in_time is not None and not in_time():
                raise IndexPageError(TOO_SLOW)
            parser.feed(text[start:start + HTML_PIECE])
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


def torch_wheels(filenames: Iterable[str], in_time: Optional[Callable[[], bool]] = None) -> list[IndexWheel]:
    """The torch wheels among the names (others, and names that do not parse, are skipped);
    IndexPageError when ``in_time`` (the caller's deadline, asked every 1000 names) turns false."""
    wheels = []
    for count, name in enumerate(filenames):
        if in_time is not None and count % 1000 == 999 and not in_time():
            raise IndexPageError(TOO_SLOW)
        if _LONG_NUMBER.search(name):  # a 5000-digit version part: not a release, and int() would refuse it
            continue
        try:
            project, version, _build, tags = parse_wheel_filename(name)
        except (InvalidWheelFilename, InvalidVersion, ValueError):
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
    table: dict[str, Any], filenames: Iterable[str], *, index_url: str, fetched_at: str, sha256: str,
    final_url: Optional[str] = None, in_time: Optional[Callable[[], bool]] = None,
) -> dict[str, Any]:
    """The overlay for what the index holds and the table lacks. ``table`` is the shipped table's JSON.

    The trust rule: an overlay never changes what the shipped table says about a release it ships
    (no new variants, no newer patch release, no new platform): the index is trusted only for
    releases newer than the newest one the shipped table knows, and those are marked as coming
    from the index. What the index lists for shipped or older releases is reported in ``ignored``."""
    patches, seen = seen_variants(torch_wheels(filenames, in_time))
    if not patches:
        raise IndexPageError("the index page lists no torch wheels")
    releases: list[dict[str, Any]] = json.loads(json.dumps(table.get("pytorch_releases", [])))
    shipped = {r["version"]: r for r in releases}
    newest_shipped = max((_key(v) for v in shipped), default=(0,))
    by_version = dict(shipped)
    driver_minors = {".".join(row["version"].split(".")[:2]) for row in table.get("cuda_releases", [])}
    floors = {row["cuda_major"] for row in table.get("minor_version_compatibility", [])}
    added_releases: list[dict[str, Any]] = []
    ignored: list[str] = []
    for item in seen:
        cuda = cuda_of(item.variant)
        if cuda not in driver_minors and _key(cuda)[0] not in floors:
            continue  # no driver row and no floor for its major: nothing could judge it
        known = shipped.get(item.release)
        if known is not None:
            if not any(v["name"] == item.variant for v in known["variants"]):
                ignored.append(f"PyTorch {item.release} {item.variant}: listed by the index, not in the shipped table; "
                               "not added (an overlay never changes a shipped release)")
            continue
        if _key(item.release) <= newest_shipped:
            ignored.append(f"PyTorch {item.release} {item.variant}: listed by the index, but {item.release} is not newer than "
                           "the newest shipped release; not added")
            continue
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
                "note": f"seen on the wheel index {index_host(index_url)} by `cudadoctor table update` ({fetched_at[:10]}); "
                        "no source describes it yet",
            }
            by_version[item.release] = rel
            releases.append(rel)
            releases.sort(key=lambda r: _key(r["version"]))
            added_releases.append(rel)
        entry = _inferred_variant(releases, item, cuda, patches[item.release])
        rel["variants"].append(entry)
        rel["variants"].sort(key=lambda v: _key(v["cuda"]))
    for version, known in shipped.items():
        on_index = patches.get(version, ())
        if on_index and _key(on_index[-1]) > _key(known["full_version"]):
            ignored.append(f"PyTorch {version}: the index lists {on_index[-1]}, the shipped table {known['full_version']}; "
                           "the shipped table's stands")
    return {
        "format": OVERLAY_FORMAT,
        "version": OVERLAY_VERSION,
        "index_url": index_url,
        "final_url": final_url if final_url is not None else index_url,
        "fetched_at": fetched_at,
        "sha256": sha256,
        "releases": added_releases,
        "variants": [],  # variants of shipped releases: never (kept for the overlay format)
        "full_versions": {},  # newer patches of shipped releases: never (kept for the overlay format)
        "ignored": ignored,
    }


def index_host(url: Optional[str]) -> str:
    """The host (and port) of an index URL, as shown beside what came from it."""
    match = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/@]*@)?([^/?#]*)", url or "")
    return match.group(1) if match and match.group(1) else "an unnamed index"


def empty_overlay() -> dict[str, Any]:
    """An overlay that adds nothing from an index (what `table learn` starts from when there is none)."""
    return {"format": OVERLAY_FORMAT, "version": OVERLAY_VERSION, "index_url": None, "final_url": None, "fetched_at": None,
            "sha256": None, "releases": [], "variants": [], "full_versions": {}, "ignored": []}


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


_VERSION_TEXT = re.compile(r"^[0-9]{1,6}(\.[0-9]{1,6}){1,3}$")


def _version_key(value: Any) -> Optional[tuple[int, ...]]:
    return _key(value) if isinstance(value, str) and _VERSION_TEXT.match(value) else None


def check_overlay_shape(overlay: Any) -> None:
    """TableError (one line naming the part) unless ``overlay`` has the overlay's shape: the right
    format and version, and each key of the right type. What lies inside a release is the merged
    table's validation's to judge."""
    if not isinstance(overlay, dict) or overlay.get("format") != OVERLAY_FORMAT:
        raise TableError("not a cudadoctor table overlay")
    if overlay.get("version") != OVERLAY_VERSION:
        raise TableError(f"overlay version {str(overlay.get('version'))[:20]!r} is not {OVERLAY_VERSION}")
    for key in ("releases", "variants"):
        if not isinstance(overlay.get(key, []), list) or not all(isinstance(v, dict) for v in overlay.get(key, [])):
            raise TableError(f"overlay: {key!r} must be a list of objects")
    for rel in overlay.get("releases", []):
        if _version_key(rel.get("version")) is None or not isinstance(rel.get("variants", []), list) \
                or not all(isinstance(v, dict) for v in rel.get("variants", [])):
            raise TableError("overlay: a release must have a version (X.Y) and a list of variants")
    for variant in overlay.get("variants", []):
        if not isinstance(variant.get("release"), str):
            raise TableError("overlay: a variant's 'release' must be a version string (X.Y)")
    full = overlay.get("full_versions", {})
    if not isinstance(full, dict) or not all(isinstance(v, str) for v in full.values()):
        raise TableError("overlay: 'full_versions' must be an object of version strings")
    for key in ("index_url", "final_url", "fetched_at", "sha256"):
        if not isinstance(overlay.get(key), (str, type(None))):
            raise TableError(f"overlay: {key!r} must be a string")


def _from_index(variant: dict[str, Any], table: dict[str, Any], overlay: dict[str, Any]) -> None:
    """Mark a variant the overlay adds as coming from its index (host and date), and where pip
    installs it from: the index it was seen on, unless that is the table's own wheel index."""
    variant["source"] = OVERLAY_SOURCE
    root = redact_url(str(overlay.get("index_url") or "")).rstrip("/")
    template = table.get("wheel_index", {}).get("url_template", "") if isinstance(table.get("wheel_index"), dict) else ""
    shipped_root = str(template).split("{variant}", 1)[0].rstrip("/")
    variant.pop("index_url", None)
    if root and root != shipped_root:
        variant["index_url"] = root
    date = str(overlay.get("fetched_at") or "")[:10] or "on an unknown date"
    variant["seen_on"] = f"the wheel index {index_host(root) if root else 'of an overlay'}, read {date}"


def merge_overlay(table: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """The shipped table's JSON with the overlay's additions; TableError when the overlay is malformed.
    The merged table still goes through the table's validation (parse_table).

    The trust rule holds here too (an overlay written by hand or by an older cudadoctor): only a
    release newer than the newest shipped one is taken from it, with its variants, marked as coming
    from the index; nothing it says about a shipped release is used (learned arch lists aside: those
    were read from the wheels themselves, compat/learned.py)."""
    check_overlay_shape(overlay)
    merged: dict[str, Any] = json.loads(json.dumps(table))
    releases = merged.setdefault("pytorch_releases", [])
    by_version = {r.get("version"): r for r in releases if isinstance(r, dict)}
    shipped = set(by_version)
    newest = max((k for k in (_version_key(v) for v in shipped) if k is not None), default=(0,))
    from_index: set[str] = set()
    for rel in overlay.get("releases", []):
        version = rel["version"]
        key = _version_key(version)
        if version in by_version or key is None or key <= newest:
            continue  # a release the shipped table knows (its facts win), or one no newer than its newest
        rel = json.loads(json.dumps(rel))
        rel["source"] = OVERLAY_SOURCE
        for variant in rel.get("variants", []):
            _from_index(variant, table, overlay)
        releases.append(rel)
        by_version[version] = rel
        from_index.add(version)
    for variant in overlay.get("variants", []):
        variant = dict(variant)
        release = variant.pop("release", None)
        if not isinstance(release, str) or release not in from_index:
            continue  # never a variant of a shipped release
        rel = by_version[release]
        if any(isinstance(v, dict) and v.get("name") == variant.get("name") for v in rel["variants"]):
            continue
        _from_index(variant, table, overlay)
        rel["variants"].append(variant)
        rel["variants"].sort(key=lambda v: _version_key(v.get("cuda")) or (0,))
    for version, full in (overlay.get("full_versions") or {}).items():
        rel = by_version.get(version)
        if rel is not None and version in from_index and re.match(r"^\d{1,6}\.\d{1,6}\.\d{1,6}$", full) \
                and _key(full) > (_version_key(rel.get("full_version")) or (0,)):
            rel["full_version"] = full
    releases.sort(key=lambda r: _version_key(r.get("version")) or (0,) if isinstance(r, dict) else (0,))
    from .learned import LEARNED_KEY, apply_learned  # arch lists `table learn` read from wheels

    apply_learned(merged, overlay)
    if overlay.get("index_url"):  # an overlay of `table learn` alone read no index
        merged.setdefault("sources", {})[OVERLAY_SOURCE] = {
            "document": f"the wheel index {index_host(overlay.get('index_url'))}, read by `cudadoctor table update`",
            "section": f"torch/ project page fetched {overlay.get('fetched_at')} (sha256 {overlay.get('sha256')}); "
            "only releases newer than the shipped table's newest are taken from it; "
            "arch lists of variants no source describes are inferred",
            "url": redact_url(str(overlay.get("final_url") or overlay.get("index_url") or "")),
        }
    fetched = str(overlay.get("fetched_at", ""))[:10]
    if re.match(r"^\d{4}-\d{2}-\d{2}$", fetched) and fetched > str(merged.get("updated", "")):
        merged["updated"] = fetched
    merged["overlay"] = {k: overlay.get(k) for k in ("index_url", "fetched_at", "sha256")}
    merged["overlay"]["index_url"] = redact_url(overlay["index_url"]) if overlay.get("index_url") else overlay.get("index_url")
    merged["overlay"]["final_url"] = redact_url(str(overlay.get("final_url") or overlay.get("index_url") or "")) or None
    merged["overlay"]["index_host"] = index_host(overlay.get("index_url")) if overlay.get("index_url") else None
    merged["overlay"]["releases"] = sorted(from_index, key=_key)
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


def overlay_ignored(overlay: dict[str, Any]) -> list[str]:
    """What the index listed that the overlay does not take (shipped or older releases)."""
    ignored = overlay.get("ignored") if isinstance(overlay, dict) else None
    return [line for line in ignored if isinstance(line, str)] if isinstance(ignored, list) else []


def _variant_word(variant: dict[str, Any]) -> str:
    how = f"inferred from {variant['inferred_from']}" if variant.get("inferred_from") else "arch list unverified"
    first = f", from {variant['first_patch']}" if variant.get("first_patch") else ""
    return f"{variant['name']} ({how}; {', '.join(variant.get('platforms', []))}{first})"
