"""Rich tables for `cudadoctor table`: the driver table, the PyTorch matrix, one release, one GPU,
the GPU catalog and the sources. Reads the same views as `--json` (report/table_payload.py).
Every cell is plain text (``Text``), so a table's own strings are never read as markup."""

from __future__ import annotations

from typing import Any, Iterable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..compat.table import CompatTable, platform_label
from .layout import Printer


class _Grid:
    """A table's title, columns and rows (plain strings), printed by ``_show``."""

    def __init__(self, title: str, *columns: str):
        self.title = title
        self.columns = columns
        self.rows: list[tuple[str, ...]] = []


def _table(title: str, *columns: str) -> _Grid:
    return _Grid(title, *columns)


def _row(grid: _Grid, *cells: Any) -> None:
    grid.rows.append(tuple(str(cell) for cell in cells))


def _longest_word(texts: Iterable[str]) -> int:
    return max((len(word) for text in texts for word in text.split()), default=1)


def _show(console: Console, grid: _Grid) -> None:
    """As a table when every column fits without breaking a word (cells wrap at spaces); otherwise
    (a narrow terminal) one wrapped line per row, so no value is ever cut."""
    # Titles are plain strings: the console reads no markup, and rich styles a string title itself.
    table = Table(title=grid.title or None, title_justify="left", show_lines=False, pad_edge=False)
    needed = 1  # the left border; each column adds its padding (2) and its right border (1)
    for i, column in enumerate(grid.columns):
        cells = [column] + [row[i] for row in grid.rows if i < len(row)]
        longest = _longest_word(cells)
        needed += longest + 3
        table.add_column(Text(column), overflow="fold", min_width=longest)
    for row in grid.rows:
        table.add_row(*(Text(cell) for cell in row))
    if needed <= console.width:
        console.print(table)
        return
    out = Printer(console)
    if grid.title:
        out.line((grid.title, "bold"))
    for row in grid.rows:
        pairs = [f"{name} {cell}" for name, cell in zip(grid.columns[1:], row[1:]) if cell]
        out.line((row[0], "bold"), (": " + "; ".join(pairs), ""), indent=2, hanging=4)


def _print(console: Console, text: str, style: str = "") -> None:
    """A line that wraps under its own indent (report/layout.py)."""
    body = text.lstrip(" ")
    lead = len(text) - len(body)
    Printer(console).line((body, style), indent=lead, hanging=lead + 2)


def _say(console: Console, *segments: Any) -> None:
    """Styled segments (plain strings or (text, style) pairs) wrapped with a hanging indent."""
    Printer(console).line(*((seg, "") if isinstance(seg, str) else seg for seg in segments))


# How a driver row not printed as a version in Table 3 is known (compat.table.CUDA_ROW_EVIDENCE): its mark and footnote.
_DRIVER_ROW_MARKS = {
    "redist-manifest": (" †", "not read from Table 3: the driver NVIDIA pairs with the release in its redistributable manifest and CUDA repository"),
    "runfile-name": (" ‡", "no Table 3 row: the driver NVIDIA's own installer bundles, as its file name (cuda_X.Y.Z_<driver>_linux.run) says"),
    "driver-branch": (" §", "NVIDIA prints only the driver branch: any driver of that branch or newer"),
}


def render_overview(console: Console, table: CompatTable) -> None:
    drivers = _table(
        "CUDA toolkit and driver (NVIDIA Table 3: the driver packaged with each release)",
        "CUDA",
        "row",
        "Linux >=",
        "Windows >=",
    )
    for row in table.cuda_releases:
        mark = _DRIVER_ROW_MARKS.get(row.evidence, ("", ""))[0]
        _row(drivers, f"{row.version}{mark}", row.kind or "", row.min_driver_linux, row.min_driver_windows or "n/a")
    _show(console, drivers)
    for evidence, (mark, words) in _DRIVER_ROW_MARKS.items():
        if any(row.evidence == evidence for row in table.cuda_releases):
            _print(console, f"{mark.strip()} {words}", "dim")
    floors = _table("Minor-version compatibility (runs, with caveats, below the Table 3 driver)", "CUDA", "Linux >=", "Windows >=", "NVIDIA's wording")
    for floor in table.minor_version_compat:
        _row(floors, f"{floor.cuda_major}.x", floor.min_driver_linux, floor.min_driver_windows or "n/a", floor.nvidia_text)
    _show(console, floors)
    render_matrix(console, table)
    overlay = table.raw.get("overlay") if isinstance(table.raw, dict) else None
    merged = f" with the overlay from {overlay.get('index_url')} ({overlay.get('fetched_at')})" if isinstance(overlay, dict) else ""
    _print(console, f"Table {table.path}{merged}, updated {table.updated}. More: --torch X.Y, --gpu NAME, --gpus, --sources, --json.", "dim")


def render_matrix(console: Console, table: CompatTable) -> None:
    matrix = _table(
        "PyTorch releases and their CUDA variants (* = default wheel on the public index; (cuNNN) = arch list unverified)",
        "torch", "variants", "cuDNN",
    )
    for release in table.pytorch_releases:
        names = [f"{v.name}*" if v.name == release.default_variant else v.name if v.verified else f"({v.name})"
                 for v in release.variants]
        cudnn = sorted({v.cudnn for v in release.variants if v.cudnn})
        _row(matrix, release.full_version, " ".join(names), ", ".join(cudnn) or "?")
    _show(console, matrix)


def _code_summary(arch_list: list[str], ptx: list[str], ptx_unknown: bool = False) -> str:
    if not arch_list:
        return "arch list not on record (unverified: never recommended)"
    sass = " ".join(f"sm_{cc.replace('.', '')}" for cc in arch_list)
    if ptx_unknown:
        return f"machine code for {sass}; PTX: not on record (never relied on)"
    return f"machine code for {sass}; PTX: " + (" ".join(f"compute_{cc.replace('.', '')}" for cc in ptx) or "none")


def render_release(console: Console, view: dict[str, Any]) -> None:
    released = view["released"] or "date not recorded"
    _say(
        console, *((f"PyTorch {view['full_version']}", "bold"), f" ({released}); default wheel: {view['default_variant'] or 'none'}")
    )
    grid = _table("", "variant", "CUDA", "Linux >=", "Windows >=", "minor-compat >=", "cuDNN", "evidence")
    for v in view["variants"]:
        _row(
            grid,
            f"{v['name']}*" if v["default"] else v["name"],
            v["cuda"],
            v["min_driver_linux"] or "?",
            v["min_driver_windows"] or "n/a",
            v["minor_compat_driver_linux"] or "n/a",
            v["cudnn"] or "?",
            v["evidence"] or "?",
        )
    _show(console, grid)
    _print(console, "* the default wheel (plain `pip install torch`); drivers: full support (Table 3) and the minor-version floor", "dim")
    if view.get("default_wheel_platforms"):
        where = ", ".join(platform_label(p) for p in view["default_wheel_platforms"])
        _print(console, f"PyPI's plain `torch` wheel is {view['default_variant']} on {where}; elsewhere it is CPU-only", "dim")
    for v in view["variants"]:
        sass = _code_summary(v["arch_list"], v["ptx"], v.get("ptx_unknown", False))
        _say(console, (v["name"], "bold"), f": {sass}")
        where = ", ".join(platform_label(p) for p in v["platforms"]) if v["platforms"] else "every platform (none ruled out on record)"
        first = f"; from {v['first_patch']} on (absent from {view['version']}.0)" if v["first_patch"] else ""
        _print(console, f"  platforms: {where}{first}")
        for build in v["platform_builds"]:
            _print(console, f"  {platform_label(build['platform'])}: {_code_summary(build['arch_list'], build['ptx'], build.get('ptx_unknown', False))} ({build['evidence']})")
        if v["inferred_from"]:
            _print(console, f"  arch list inferred from PyTorch {v['inferred_from']} (`cudadoctor table update`)", "yellow")
        if v.get("seen_on"):
            _print(console, f"  not in the shipped table: from {v['seen_on']} (`cudadoctor table update`)", "yellow")
        if v["pip_command"]:
            Printer(console).command(v["pip_command"])
        elif v["wheel_page_url"]:
            _print(console, f"  download the wheel for your Python from {v['wheel_page_url']} (PyTorch's page gives no pip command)")
        for image in v["images"]:
            _print(console, f"  image: {image}")
        if v["note"]:
            _print(console, f"  note: {v['note']}", "dim")
    if view["note"]:
        _print(console, f"note: {view['note']}", "dim")


def render_gpu(console: Console, view: dict[str, Any]) -> None:
    if view["name"] is not None:
        _say(console, (view["name"], "bold"), f": compute capability {view['cc']}, {view['architecture']}, {view['brand_class']}")
        if view["aliases"]:
            _print(console, f"  also known as: {', '.join(view['aliases'])}")
        if view["unverified_aliases"]:
            _print(console, f"  NVML names not yet confirmed by a source: {', '.join(view['unverified_aliases'])}", "dim")
        if view.get("forward_compat"):
            _print(console, f"  CUDA forward compatibility (cuda-compat): {view['forward_compat']}")
    else:
        _say(console, (f"compute capability {view['cc']}", "bold"), f" ({view['architecture'] or 'unknown architecture'})")
        if view["products"]:
            _print(console, f"  products: {', '.join(view['products'])}")
    _print(console, f"  features: {', '.join(view['features']) or 'none of those the table tracks'}")
    last = view.get("last_driver_branch")
    if last is not None:
        if last["branch"] is None:
            _print(console, "  last driver branch: none yet (new driver branches still support it)")
        else:
            how = " (announced)" if last["evidence"] == "announced" else ""
            _print(console, f"  last driver branch: R{last['branch']}{how}: no newer driver supports {last['architecture']} GPUs")
    grid = _table("PyTorch builds that carry code for it", "torch", "machine code (SASS)", "PTX only (JIT)")
    for row in view["pytorch_builds"]:
        _row(grid, row["torch"], " ".join(row["sass"]) or "-", " ".join(row["ptx_only"]) or "-")
    _show(console, grid)


def render_gpus(console: Console, rows: list[dict[str, Any]]) -> None:
    grid = _table(f"GPU catalog ({len(rows)} products)", "product", "cc", "architecture", "class", "also matches")
    for row in rows:
        _row(grid, row["name"], row["cc"], row["architecture"], row["brand_class"], ", ".join(row["aliases"]))
    _show(console, grid)


def render_sources(console: Console, rows: list[dict[str, Any]]) -> None:
    _print(console, "Where each fact comes from", "bold")
    for row in rows:
        _say(console, (row["key"], "bold"), f": {row['document']}" + (f", {row['section']}" if row["section"] else ""))
        if row["url"]:
            _print(console, f"  {row['url']}")
        if row["examples"]:
            more = f" and {row['cited_by'] - len(row['examples'])} more" if row["cited_by"] > len(row["examples"]) else ""
            _print(console, f"  cited by {', '.join(row['examples'])}{more}", "dim")
