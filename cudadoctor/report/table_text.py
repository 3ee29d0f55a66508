"""Rich tables for `cudadoctor table`: the driver table, the PyTorch matrix, one release, one GPU,
the GPU catalog and the sources. Reads the same views as `--json` (tableview.py)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..table import CompatTable


def _table(title: str, *columns: str) -> Table:
    grid = Table(title=title, title_justify="left", show_lines=False, pad_edge=False)
    for column in columns:
        # Versions must never be cut: short columns keep their width, long text folds.
        grid.add_column(column, overflow="fold", min_width=min(len(column), 11))
    return grid


def render_overview(console: Console, table: CompatTable) -> None:
    drivers = _table(
        "CUDA toolkit and driver (NVIDIA Table 3: the driver packaged with each release)",
        "CUDA",
        "row",
        "Linux >=",
        "Windows >=",
    )
    for row in table.cuda_releases:
        drivers.add_row(
            str(row.version),
            row.kind or "",
            str(row.min_driver_linux),
            str(row.min_driver_windows) if row.min_driver_windows else "n/a",
        )
    console.print(drivers)
    floors = _table("Minor-version compatibility (runs, with caveats, below the Table 3 driver)", "CUDA", "Linux >=", "Windows >=", "NVIDIA's wording")
    for row in table.minor_version_compat:
        floors.add_row(
            f"{row.cuda_major}.x",
            str(row.min_driver_linux),
            str(row.min_driver_windows) if row.min_driver_windows else "n/a",
            escape(row.nvidia_text),
        )
    console.print(floors)
    render_matrix(console, table)
    console.print(
        f"[dim]Table {escape(table.path)}, updated {table.updated}. More: --torch X.Y, --gpu NAME, --gpus, --sources, --json.[/dim]"
    )


def render_matrix(console: Console, table: CompatTable) -> None:
    matrix = _table("PyTorch releases and their CUDA variants (* = default wheel on the public index)", "torch", "variants", "cuDNN")
    for release in table.pytorch_releases:
        names = [f"{v.name}*" if v.name == release.default_variant else v.name for v in release.variants]
        cudnn = sorted({v.cudnn for v in release.variants if v.cudnn})
        matrix.add_row(release.full_version, " ".join(names), ", ".join(cudnn) or "?")
    console.print(matrix)


def render_release(console: Console, view: dict[str, Any]) -> None:
    released = view["released"] or "date not recorded"
    console.print(
        f"[bold]PyTorch {view['full_version']}[/bold] ({released}); default wheel: {view['default_variant'] or 'none'}"
    )
    grid = _table("", "variant", "CUDA", "Linux >=", "Windows >=", "minor-compat >=", "cuDNN", "evidence")
    for v in view["variants"]:
        grid.add_row(
            f"{v['name']}*" if v["default"] else v["name"],
            v["cuda"],
            v["min_driver_linux"] or "?",
            v["min_driver_windows"] or "n/a",
            v["minor_compat_driver_linux"] or "n/a",
            v["cudnn"] or "?",
            v["evidence"] or "?",
        )
    console.print(grid)
    console.print("[dim]* the default wheel (plain `pip install torch`); drivers: full support (Table 3) and the minor-version floor[/dim]")
    for v in view["variants"]:
        sass = " ".join(f"sm_{cc.replace('.', '')}" for cc in v["arch_list"])
        ptx = " ".join(f"compute_{cc.replace('.', '')}" for cc in v["ptx"]) or "none"
        console.print(f"[bold]{v['name']}[/bold]: machine code for {sass}; PTX: {ptx}")
        console.print(f"  pip install torch=={view['full_version']} --index-url {v['wheel_index_url']}")
        for image in v["images"]:
            console.print(f"  image: {escape(image)}")
        if v["note"]:
            console.print(f"  [dim]note: {escape(v['note'])}[/dim]")
    if view["note"]:
        console.print(f"[dim]note: {escape(view['note'])}[/dim]")


def render_gpu(console: Console, view: dict[str, Any]) -> None:
    if "name" in view:
        console.print(f"[bold]{escape(view['name'])}[/bold]: compute capability {view['cc']}, {view['architecture']}, {view['brand_class']}")
        if view["aliases"]:
            console.print(f"  also known as: {escape(', '.join(view['aliases']))}")
        if view["unverified_aliases"]:
            console.print(f"  [dim]NVML names not yet confirmed by a source: {escape(', '.join(view['unverified_aliases']))}[/dim]")
        if view.get("forward_compat"):
            console.print(f"  CUDA forward compatibility (cuda-compat): {view['forward_compat']}")
    else:
        console.print(f"[bold]compute capability {view['cc']}[/bold] ({view['architecture'] or 'unknown architecture'})")
        if view["products"]:
            console.print(f"  products: {escape(', '.join(view['products']))}")
    console.print(f"  features: {', '.join(view['features']) or 'none of those the table tracks'}")
    grid = _table("PyTorch builds that carry code for it", "torch", "machine code (SASS)", "PTX only (JIT)")
    for row in view["pytorch_builds"]:
        grid.add_row(row["torch"], " ".join(row["sass"]) or "-", " ".join(row["ptx_only"]) or "-")
    console.print(grid)


def render_gpus(console: Console, rows: list[dict[str, Any]]) -> None:
    grid = _table(f"GPU catalog ({len(rows)} products)", "product", "cc", "architecture", "class", "also matches")
    for row in rows:
        grid.add_row(escape(row["name"]), row["cc"], row["architecture"], row["brand_class"], escape(", ".join(row["aliases"])))
    console.print(grid)


def render_sources(console: Console, rows: list[dict[str, Any]]) -> None:
    console.print("[bold]Where each fact comes from[/bold]")
    for row in rows:
        console.print(f"[bold]{row['key']}[/bold]: {escape(row['document'])}" + (f", {escape(row['section'])}" if row["section"] else ""))
        if row["url"]:
            console.print(f"  {escape(row['url'])}")
        if row["examples"]:
            more = f" and {row['cited_by'] - len(row['examples'])} more" if row["cited_by"] > len(row["examples"]) else ""
            console.print(f"  [dim]cited by {escape(', '.join(row['examples']))}{more}[/dim]")
