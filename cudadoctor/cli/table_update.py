"""`cudadoctor table update`: fetch the index page, derive the overlay, check it, write it atomically."""

from __future__ import annotations

import datetime
import sys
import time
from typing import TYPE_CHECKING, Any, Optional

import click

from ..model.text import escape_control
from .errors import InputError
from .inputs import emit_json

if TYPE_CHECKING:
    from ..probe.http_get import Policy


def run(index_url: Optional[str], timeout: float, dry_run: bool, as_json: bool, where: str, policy: "Policy") -> None:
    from ..compat.table import TableError
    from ..compat.validate import parse_table
    from ..compat.wheel_index import (ACCEPT, IndexPageError, derive_overlay, merge_overlay, overlay_changes, overlay_ignored,
                                      page_filenames)
    from ..app.loader import default_table_path, load_table
    from ..app.files import OutputError
    from ..app.overlay import refuse_symlinked, usable_overlay, write_overlay
    from ..model.redact import redact_url
    from ..probe.wheel_index import IndexFetchError, fetch_page

    deadline = time.monotonic() + timeout  # one deadline: the exchange and reading the page share it
    try:
        shipped = load_table(default_table_path())  # an explicit path: the shipped facts, no overlay
        refuse_symlinked(where)
        previous = usable_overlay(where)  # a malformed one: one warning line, and it is replaced
    except (TableError, OutputError) as exc:
        raise InputError(str(exc)) from None
    root = (index_url or shipped.wheel_index_root()).rstrip("/")
    page_url = f"{root}/torch/"
    shown_url = redact_url(page_url)
    progress = _Progress() if sys.stderr.isatty() and not as_json else None
    try:
        page = fetch_page(page_url, ACCEPT, timeout, progress, deadline=deadline, policy=policy)
    except IndexFetchError as exc:
        raise InputError(f"table update: {exc}; the previous overlay is unchanged") from None
    finally:
        if progress is not None:
            progress.done()
    fetched_at = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    try:
        def in_time() -> bool:
            return time.monotonic() < deadline

        names = page_filenames(page.body, page.content_type, in_time=in_time)
        overlay = derive_overlay(shipped.raw, names, index_url=redact_url(root), fetched_at=fetched_at, sha256=page.sha256,
                                 final_url=page.url, in_time=in_time)
        if isinstance(previous, dict) and isinstance(previous.get("learned"), list):
            overlay["learned"] = previous["learned"]  # what `table learn` read from wheels stays
        merged = merge_overlay(shipped.raw, overlay)
        parse_table(merged, "merged table")  # the same rules as the shipped table
    except (IndexPageError, TableError) as exc:
        raise InputError(f"table update: {shown_url}: {exc}; the previous overlay is unchanged") from None
    if time.monotonic() >= deadline:
        raise InputError(f"table update: {shown_url}: not read within {timeout:g} s (--timeout); the previous overlay is unchanged")
    changes = overlay_changes(overlay)
    before = set(overlay_changes(previous)) if previous is not None and _usable(previous) else set()
    new = [line for line in changes if line not in before]
    if not dry_run:
        try:
            write_overlay(overlay, where)
        except OutputError as exc:
            raise InputError(f"table update: {exc}; the previous overlay is unchanged") from None
    if as_json:
        emit_json(dict(_payload(overlay, changes, new, where, dry_run, len(names)), final_url=page.url,
                       ignored=overlay_ignored(overlay)))
        return
    verb = "would add" if dry_run else "added"
    click.echo(f"read {escape_control(page.url)}: {len(names)} files (sha256 {page.sha256[:12]}...)")
    for line in changes:
        click.echo(f"  {escape_control(line)}" + ("" if line in new else "  (already in the overlay)"))
    if not changes:
        click.echo("  nothing to add: the index lists no release newer than the shipped table's newest")
    for line in overlay_ignored(overlay):
        click.echo(f"  ignored: {escape_control(line)}")
    click.echo(f"{verb} {len(changes)} change(s); overlay {escape_control(where)}" + (" (not written: --dry-run)" if dry_run else ""))


def _usable(overlay: Optional[dict[str, Any]]) -> bool:
    return isinstance(overlay, dict) and isinstance(overlay.get("releases"), list) and isinstance(overlay.get("variants"), list) \
        and isinstance(overlay.get("full_versions"), dict)


def _payload(overlay: dict[str, Any], changes: list[str], new: list[str], where: str, dry_run: bool, files: int) -> dict[str, Any]:
    return {
        "index_url": overlay["index_url"],
        "fetched_at": overlay["fetched_at"],
        "sha256": overlay["sha256"],
        "files": files,
        "overlay_path": where,
        "written": not dry_run,
        "changes": changes,
        "new_changes": new,
        "releases": [r["version"] for r in overlay["releases"]],
        "variants": [f"{v['release']} {v['name']}" for v in overlay["variants"]],
        "inferred": [
            f"{r['version']} {v['name']}" for r in overlay["releases"] for v in r["variants"] if v.get("evidence") == "inferred"
        ] + [f"{v['release']} {v['name']}" for v in overlay["variants"] if v.get("evidence") == "inferred"],
    }


class _Progress:
    """Bytes downloaded so far, on one terminal line (stderr is a terminal; nothing when piped)."""

    def __init__(self) -> None:
        self.shown = False

    def __call__(self, size: int, total: Optional[int]) -> None:
        of = f" of {total / 1024:.0f}" if total else ""
        click.echo(f"\rdownloading the index: {size / 1024:.0f}{of} KiB", nl=False, err=True)
        self.shown = True

    def done(self) -> None:
        if self.shown:
            click.echo("", err=True)
