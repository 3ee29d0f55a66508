"""Text from users, tables, images and NVML is printed literally: rich markup in it is not read."""

from __future__ import annotations

import json

from helpers import REPO_ROOT, invoke


def _snapshot_with_gpu_name(tmp_path, name: str) -> str:
    data = json.loads((REPO_ROOT / "tests" / "hosts" / "rtx4090-550.json").read_text())
    data["host"]["gpus"][0]["name"] = name
    path = tmp_path / "host.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_gpu_name_with_markup_prints_as_written(tmp_path):
    name = "[red]NVIDIA[/red] [link=file:///etc/passwd]RTX 4090[/link] [bold"
    run = invoke("check", "--verbose", "--snapshot", _snapshot_with_gpu_name(tmp_path, name))  # -v: the gpu-ok line
    assert run.exit_code in (0, 1), run.stderr
    assert f"GPU 0 ({name})" in run.stdout


def test_a_table_whose_names_hold_markup_prints_them_as_written(tmp_path):
    table = json.loads((REPO_ROOT / "data" / "compat_table.json").read_text())
    table["gpus"][0]["name"] = "[red]Injected[/red]"
    table["gpus"][0]["aliases"] = ["[/]", "[bold]x"]
    table["gpus"][0]["architecture"] = "[blink]Kepler[/blink]"
    path = tmp_path / "table.json"
    path.write_text(json.dumps(table))
    listing = invoke("table", "--gpus", "--table", str(path), env={"COLUMNS": "300"})
    assert listing.exit_code == 0, listing.stderr
    assert "[red]Injected[/red]" in listing.stdout and "[bold]x" in listing.stdout
    assert "[blink]Kepler[/blink]" in listing.stdout
    one = invoke("table", "--gpu", "[red]Injected[/red]", "--table", str(path), env={"COLUMNS": "300"})
    assert one.exit_code == 0, one.stderr
    assert "[red]Injected[/red]" in one.stdout and "[blink]Kepler[/blink]" in one.stdout
