"""The help and the README say what the code does: the default release, every schema."""

from __future__ import annotations

import json

from helpers import REPO_ROOT, invoke


def test_torch_help_names_the_real_default() -> None:
    from cudadoctor.doctor import resolve_request
    from cudadoctor.app.loader import load_table

    table = load_table()
    assert resolve_request(table).release.version == table.newest_release.version
    for command in ("check", "recommend", "fleet"):
        text = " ".join(invoke(command, "--help").stdout.split())
        assert "newest release the table knows" in text and "fully records" not in text


def test_readme_names_every_schema() -> None:
    names = invoke("schema").stdout.split()
    assert {"fleet", "node-affinity", "table_update"} <= set(names)
    readme = (REPO_ROOT / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `cudadoctor schema"))
    section = readme.split("## JSON for scripts", 1)[1].split("```", 1)[0]
    for name in names:
        assert f"`{name}`" in row, name
        assert f"`{name}`" in section or f"schema {name}`" in section, name
    assert json.loads(invoke("schema", "fleet").stdout)["$schema"].endswith("2020-12/schema")
