"""`cudadoctor table learn WHEEL|URL`: read a torch wheel's GPU code from its own binaries and record
the arch list in the table overlay (evidence "binary"), written atomically."""

from __future__ import annotations

import datetime
import os
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Optional

import click

from ..model.text import escape_control
from .errors import InputError
from .inputs import emit_json

if TYPE_CHECKING:
    from ..probe.http_get import Policy

# What a wheel's platform tag says about where it runs, as the table names platforms.
_PLATFORMS = (("aarch64", "linux-aarch64"), ("x86_64", "linux-x86_64"), ("win_amd64", "windows"))


def _platform(tags: Any) -> Optional[str]:
    for tag in tags:
        for word, platform in _PLATFORMS:
            if word in tag.platform:
                return platform
    return None


def _wheel_facts(name: str) -> tuple[str, str, Optional[str], str]:
    """(release "2.15", full version "2.15.0", variant "cu130" or None, platform) from a torch wheel's file name."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        project, version, _, tags = parse_wheel_filename(name)
    except (InvalidWheelFilename, ValueError) as exc:
        raise InputError(f"table learn: {name}: not a wheel file name ({str(exc)[:120]})") from None
    if project != "torch":
        raise InputError(f"table learn: {name} is a wheel of {project}, not of torch")
    platform = _platform(tags)
    if platform is None:
        raise InputError(f"table learn: {name}: its platform tag names no platform the table knows (Linux x86_64 or aarch64, Windows)")
    local = version.local or None
    return f"{version.major}.{version.minor}", version.public, local, platform


def _read_arch_lists(path: str) -> tuple[list[str], list[str]]:
    """(the compute capabilities torch/lib/libtorch_cuda*.so carries SASS for, those it carries PTX for)."""
    from ..binaries.code import PTX, SASS
    from ..probe.binaries import ScanInputError, scan_wheel
    from ..probe.torch_probe import TORCH_CUDA_LIBRARIES

    try:
        source = scan_wheel(path)
    except ScanInputError as exc:
        raise InputError(f"table learn: {exc}") from None
    libraries = [f for f in source.files if f.path.startswith("torch/lib/") and os.path.basename(f.path) in TORCH_CUDA_LIBRARIES]
    broken = next((f for f in libraries if f.code is None), None)
    if broken is not None:
        raise InputError(f"table learn: {broken.path} in {os.path.basename(path)}: {broken.error}")
    entries = [e for f in libraries if f.code is not None for e in f.code.entries]
    if not entries:
        raise InputError(f"table learn: {os.path.basename(path)} carries no GPU code in torch/lib/libtorch_cuda*.so (a CPU build?)")

    def listed(kind: str) -> list[str]:
        # Architecture-specific (sm_90a) and family (sm_100f) code runs on fewer GPUs than the plain
        # list means: only the plain targets are recorded.
        archs = {(e.major, e.minor) for e in entries if e.kind == kind and not e.suffix}
        return [f"{major}.{minor}" for major, minor in sorted(archs)]

    return listed(SASS), listed(PTX)


def _fetched(source: str, timeout: float, scratch: str, policy: "Policy") -> tuple[str, str, str]:
    """(a local path to the wheel, its file name, its sha256): the file itself, or a download into ``scratch``."""
    import hashlib
    import urllib.parse

    if not source.startswith(("http://", "https://")):
        if not os.path.isfile(source):
            raise InputError(f"table learn: {source}: no such file (give a torch wheel or its http(s) URL)")
        digest = hashlib.sha256()
        with open(source, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return source, os.path.basename(source), digest.hexdigest()
    from ..probe.http_get import FetchError, check_url
    from ..probe.wheel_index import IndexFetchError, download

    try:
        check_url(source, policy)  # refused before anything is read
    except FetchError as exc:
        raise InputError(f"table learn: {exc}") from None
    name = urllib.parse.unquote(urllib.parse.urlsplit(source).path.rsplit("/", 1)[-1])
    if "/" in name or "\\" in name or "\0" in name:
        raise InputError("table learn: the URL's file name holds a path separator: give the wheel's own URL")
    _wheel_facts(name)  # a URL that names no torch wheel is refused before anything is downloaded
    path = os.path.join(scratch, name)
    progress = _Progress() if sys.stderr.isatty() else None
    try:
        sha256, _ = download(source, path, timeout, progress, policy=policy)
    except IndexFetchError as exc:
        raise InputError(f"table learn: {exc}") from None
    finally:
        if progress is not None:
            progress.done()
    return path, name, sha256


class _Progress:
    def __call__(self, size: int, total: Optional[int]) -> None:
        of = f" of {total / 1e6:.0f} MB" if total else ""
        click.echo(f"\rdownloading: {size / 1e6:.0f} MB{of}", err=True, nl=False)

    def done(self) -> None:
        click.echo("", err=True)


def run(source: str, timeout: float, as_json: bool, where: str, policy: "Policy") -> None:
    from ..app.files import OutputError
    from ..app.loader import default_table_path, load_table
    from ..app.overlay import refuse_symlinked, usable_overlay, write_overlay
    from ..compat.learned import cuda_of_variant, learned_entry, with_learned
    from ..compat.table import TableError
    from ..compat.validate import parse_table
    from ..compat.wheel_index import empty_overlay, merge_overlay

    with tempfile.TemporaryDirectory(prefix="cudadoctor-learn-") as scratch:
        path, name, sha256 = _fetched(source, timeout, scratch, policy)
        minor, full, variant, platform = _wheel_facts(name)
        sass, ptx = _read_arch_lists(path)
    try:
        shipped = load_table(default_table_path())  # the shipped facts, without any overlay
        refuse_symlinked(where)
        previous = usable_overlay(where)  # a malformed one: one warning line, and it is replaced
    except (TableError, OutputError) as exc:
        raise InputError(str(exc)) from None
    release = shipped.release(minor)
    if release is None:
        raise InputError(f"table learn: PyTorch {minor} is not in the table: run `cudadoctor table update` first, then learn its wheels")
    if variant is None:  # a PyPI wheel without a +cuNNN tag is the release's default variant
        variant = release.default_variant
    if variant is None or cuda_of_variant(variant) is None:
        raise InputError(f"table learn: {name}: not a CUDA build (its version names no cuNNN variant)")
    # What the table says of this build before (the shipped facts): the variant's own list, or for
    # an Arm wheel its Linux aarch64 build's.
    shipped_variant = release.variant(variant)
    before = shipped_variant.on_record_for(platform) if shipped_variant is not None and platform == "linux-aarch64" else shipped_variant
    earlier = next((e.get("wheel") for e in (previous or {}).get("learned") or []
                    if isinstance(e, dict) and (e.get("release"), e.get("variant"), e.get("platform")) == (minor, variant, platform)), None)
    learned_at = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    entry = learned_entry(minor, variant, platform, sass, ptx, name, sha256, learned_at)
    overlay = with_learned(previous, entry, empty_overlay())
    try:
        parse_table(merge_overlay(shipped.raw, overlay), "merged table")  # the same rules as the shipped table
    except TableError as exc:
        raise InputError(f"table learn: {name}: {exc}; the overlay is unchanged") from None
    kept = before is not None and before.evidence == "binary"
    table_list = [str(cc) for cc in before.arch_list] if before is not None else None
    disagrees = kept and table_list != sass
    try:
        write_overlay(overlay, where)
    except OutputError as exc:
        raise InputError(f"table learn: {exc}; the overlay is unchanged") from None
    if as_json:
        emit_json({
            "wheel": name, "sha256": sha256, "release": minor, "version": full, "variant": variant, "platform": platform,
            "arch_list": sass, "ptx": ptx, "table_evidence_before": before.evidence if before is not None else None,
            "table_arch_list": table_list, "disagrees": disagrees, "replaced": earlier,
            "overlay_path": where,
        })
        return
    carries = " ".join(f"sm_{a.replace('.', '')}" for a in sass) or "no SASS"
    carries += ("; PTX " + " ".join(f"compute_{a.replace('.', '')}" for a in ptx)) if ptx else ", no PTX"
    click.echo(f"read {escape_control(name)}: PyTorch {full} {variant} ({platform}) carries {carries}")
    if earlier is not None:
        click.echo(f"  replaces what `table learn` read before from {escape_control(str(earlier))}")
    elif shipped_variant is None:
        click.echo(f"  the table had no {variant} of PyTorch {minor}: added, with this platform's list as evidence binary")
    elif before is None:
        click.echo(f"  the table had no {platform} build of {variant} on record: added with evidence binary")
    elif kept:
        click.echo(f"  the table already holds {variant}'s arch list from a binary; it is kept"
                   + (f" (it says {' '.join(table_list or [])}: a custom build?)" if disagrees else ""))
    else:
        click.echo(f"  {variant}'s arch list was {before.evidence or 'unstated'}; it is now binary evidence")
    click.echo(f"overlay {escape_control(where)}")
