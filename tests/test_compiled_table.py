"""The shipped table is validated once and then loaded precompiled from the user cache
(cudadoctor/app/compiled_table.py); anything else is validated on every load."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudadoctor.app import compiled_table
from cudadoctor.app.loader import default_table_path, load_table, read_user_file
from cudadoctor.compat.table import CompatTable, TableError
from cudadoctor.compat.validate import parse_table

from helpers import REPO_ROOT


def shipped_text() -> str:
    return read_user_file(default_table_path(), "table", TableError)


def shipped_key() -> bytes:
    key = compiled_table.table_key(default_table_path(), shipped_text())
    assert key is not None
    return key


def compiled_file() -> Path:
    path = Path(compiled_table.compiled_path())
    assert path.parent == Path(os.environ["CUDADOCTOR_CACHE"])
    return path


def test_the_shipped_table_validates_and_its_compiled_form_is_the_same_table() -> None:
    parsed = parse_table(json.loads(shipped_text()), default_table_path())
    assert not compiled_file().exists()
    first = load_table()  # parsed and validated, then stored
    assert compiled_file().is_file()
    stored = compiled_table.load_compiled(shipped_key())
    assert isinstance(stored, CompatTable)
    assert stored == parsed == first
    assert load_table() == parsed  # and what the next load returns is the stored form
    assert stored.gpu_model("H100") == parsed.gpu_model("H100")
    assert stored.raw == parsed.raw


def test_a_compiled_form_made_from_other_bytes_is_not_used() -> None:
    load_table()
    text = shipped_text()
    changed = text.replace('"updated"', '"updated" ', 1)
    assert compiled_table.table_key(default_table_path(), changed) != shipped_key()
    assert compiled_table.load_compiled(compiled_table.table_key(default_table_path(), changed)) is None
    assert compiled_table.table_key("/elsewhere/compat_table.json", text) != shipped_key()


@pytest.mark.parametrize("damage", ["truncated", "garbled", "empty", "other key"])
def test_a_damaged_compiled_form_is_parsed_again_and_replaced(damage: str) -> None:
    load_table()
    data = compiled_file().read_bytes()
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "garbled":
        head, body = data[: len(data) - 5000], data[len(data) - 5000 :]
        data = head + bytes(b ^ 0x5A for b in body)
    elif damage == "empty":
        data = b""
    else:
        data = data.replace(b"compat_table.json", b"compat_table.jsoN", 1)
    compiled_file().write_bytes(data)
    assert compiled_table.load_compiled(shipped_key()) is None
    assert load_table() == parse_table(json.loads(shipped_text()), default_table_path())
    assert compiled_table.load_compiled(shipped_key()) is not None  # stored again, whole


@pytest.mark.parametrize(
    "names",
    [(("os", "system"),), (("builtins", "eval"),), (("cudadoctor.app.loader", "CompatTable"),), (("cudadoctor.compat.table", "TEMPLATE_GROUPS"),)],
)
def test_a_compiled_form_that_names_anything_but_the_tables_records_is_refused(names: tuple[tuple[str, str], ...]) -> None:
    body = marshal.dumps((names, [0, "echo compiled form ran"]))
    evil = b"%s\0%d\0%s\0%s" % (compiled_table.FORMAT, len(body), shipped_key(), body)
    compiled_file().parent.mkdir(parents=True, exist_ok=True)
    compiled_file().write_bytes(evil)
    assert compiled_table.load_compiled(shipped_key()) is None
    assert isinstance(load_table(), CompatTable)
    assert compiled_table.load_compiled(shipped_key()) is not None  # replaced by the real one


def test_records_shared_in_the_parsed_table_are_shared_in_the_compiled_one() -> None:
    load_table()
    stored = compiled_table.load_compiled(shipped_key())
    assert stored is not None
    parsed = parse_table(json.loads(shipped_text()), default_table_path())
    model = next(iter(parsed.gpu_names.values()))
    assert any(model is gpu for gpu in parsed.gpus)  # the validator's index holds the models themselves
    stored_model = stored.gpu_names[next(iter(parsed.gpu_names))]
    assert any(stored_model is gpu for gpu in stored.gpus)


def test_a_cache_that_cannot_be_written_leaves_the_table_parsed_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CUDADOCTOR_CACHE", str(blocker / "cache"))
    assert compiled_table.store_compiled(shipped_key(), load_table()) is False
    assert load_table() == parse_table(json.loads(shipped_text()), default_table_path())
    assert list(tmp_path.iterdir()) == [blocker]


def test_a_table_file_is_validated_even_when_the_shipped_one_is_compiled(tmp_path: Path) -> None:
    load_table()
    broken = json.loads(shipped_text())
    broken["schema"] = 99
    path = tmp_path / "table.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(TableError, match="schema"):
        load_table(str(path))


def test_an_overlay_is_validated_even_when_the_shipped_table_is_compiled(capsys: pytest.CaptureFixture[str]) -> None:
    shipped = load_table()
    overlay = compiled_file().parent / "table-overlay.json"
    overlay.write_text("{not json")
    capsys.readouterr()
    # A malformed overlay is read (and refused) even though the shipped table came compiled: it is
    # ignored with one warning, and the shipped table is what the run judges with.
    assert load_table() == shipped
    warning = capsys.readouterr().err
    assert "table overlay" in warning and "not valid JSON; it is ignored" in warning


def test_concurrent_first_loads_all_get_the_table_and_leave_one_whole_compiled_form() -> None:
    code = "from cudadoctor.app.loader import load_table; print(len(load_table().gpus))"
    procs = [
        subprocess.Popen([sys.executable, "-c", code], cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    expected = str(len(load_table().gpus))
    assert [(proc.returncode, out.strip(), err) for proc, (out, err) in zip(procs, outputs)] == [(0, expected, "")] * 4
    assert compiled_table.load_compiled(shipped_key()) is not None
    assert [p.name for p in compiled_file().parent.iterdir()] == [compiled_file().name]


def test_code_that_cannot_be_listed_leaves_the_table_parsed_and_nothing_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    # The key must see the code that parsed the table; when it cannot, a stored form could be another
    # version's, so none is read or written.
    monkeypatch.setattr(compiled_table, "_CODE_DIRS", ("no-such-directory",))
    assert compiled_table.table_key(str(default_table_path()), shipped_text()) is None
    assert load_table() == parse_table(json.loads(shipped_text()), default_table_path())
    assert not compiled_file().exists()


def test_the_compiled_form_is_each_users_own() -> None:
    assert compiled_file().name.endswith(f"-u{os.geteuid()}.compiled")
