"""The console script serves cudadoctor's own modules from one compiled file in the user cache
(cudadoctor/cli/bundle.py): the same modules and output as from the file system, nothing stale,
nothing another user could have written."""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cudadoctor.cli import bundle

from helpers import REPO_ROOT, cli_environment, host

WHAT_IF = ["check", "--json", "--driver", "535.104.05", "--gpu", "T4"]

WHERE_FROM = """
import json, sys
from cudadoctor.cli import bundle
bundle.install()
import cudadoctor.model.facts, cudadoctor.rules, cudadoctor.doctor.check
names = ("cudadoctor.model.facts", "cudadoctor.rules", "cudadoctor.doctor.check")
print(json.dumps({n: [type(sys.modules[n].__spec__.loader).__name__, sys.modules[n].__file__,
                      getattr(sys.modules[n], "__path__", None)] for n in names}))
"""


@pytest.fixture(autouse=True, scope="module")
def _current_bytecode() -> None:
    """The bundle stores the bytecode Python wrote; a run under PYTHONDONTWRITEBYTECODE writes
    none, so write it here (what any run without that variable does on its own)."""
    import compileall

    compileall.compile_dir(bundle.PACKAGE_DIR, quiet=1)


def cudadoctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cudadoctor", *args], cwd=REPO_ROOT, env=cli_environment(), capture_output=True, text=True, timeout=120
    )


def loaders() -> dict[str, list[object]]:
    run = subprocess.run([sys.executable, "-c", WHERE_FROM], cwd=REPO_ROOT, env=cli_environment(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    found: dict[str, list[object]] = json.loads(run.stdout)
    return found


def bundle_file() -> Path:
    path = Path(bundle.bundle_path())
    assert path.parent == Path(os.environ["CUDADOCTOR_CACHE"])
    return path


def rewrite(entries: dict[str, bundle.Entry]) -> None:
    body = marshal.dumps((bundle.PACKAGE_DIR, entries))
    bundle_file().write_bytes(bundle._head(body) + b"\0" + body)


def masked(text: str) -> str:
    return re.sub(r'"probed_at": "[^"]*"', '"probed_at": "-"', text)


def test_a_run_stores_its_modules_and_the_next_run_takes_them_from_the_bundle() -> None:
    assert not bundle_file().exists()
    first = cudadoctor(*WHAT_IF)
    assert first.returncode in (0, 1), first.stderr
    assert bundle_file().is_file()
    found = loaders()
    for name, (loader, origin, path) in found.items():
        assert loader == "_Loader", name
        assert origin == str(REPO_ROOT / (name.replace(".", "/") + ("/__init__.py" if path else ".py")))
    assert found["cudadoctor.rules"][2] == [str(REPO_ROOT / "cudadoctor" / "rules")]
    second = cudadoctor(*WHAT_IF)
    assert (second.returncode, masked(second.stdout), second.stderr) == (first.returncode, masked(first.stdout), first.stderr)


def test_a_bundle_from_a_fast_path_run_still_lets_the_click_path_import_the_rest() -> None:
    cudadoctor(*WHAT_IF)
    helped = cudadoctor("check", "--help")
    assert helped.returncode == 0 and "--driver" in helped.stdout and helped.stderr == ""
    tag = cudadoctor("recommend", "--snapshot", host("h100-550"), "--image", "--format", "tag")
    assert tag.returncode == 0 and tag.stdout.strip()


def test_a_module_whose_source_changed_is_imported_from_its_source_and_stored_again() -> None:
    cudadoctor(*WHAT_IF)
    entries = bundle._read(str(bundle_file()))
    origin, size, mtime, is_package, code, inode, ctime = entries["cudadoctor.model.facts"]
    broken = marshal.dumps(compile("BROKEN = True", origin, "exec"))
    entries["cudadoctor.model.facts"] = (origin, size, mtime - 1, is_package, broken, inode, ctime)
    rewrite(entries)
    found = loaders()
    assert found["cudadoctor.model.facts"][0] == "SourceFileLoader"
    assert found["cudadoctor.rules"][0] == "_Loader"
    assert cudadoctor(*WHAT_IF).returncode in (0, 1)  # this run stores the module again
    assert bundle._read(str(bundle_file()))["cudadoctor.model.facts"][2] == mtime
    assert loaders()["cudadoctor.model.facts"][0] == "_Loader"


def test_a_bundle_others_may_write_or_that_is_garbled_is_not_used() -> None:
    reference = cudadoctor(*WHAT_IF)
    bundle_file().chmod(0o666)
    assert loaders()["cudadoctor.model.facts"][0] == "SourceFileLoader"
    bundle_file().chmod(0o600)
    bundle_file().write_bytes(bundle.FORMAT + b"\0" + b"\x00garbage" * 100)
    assert loaders()["cudadoctor.model.facts"][0] == "SourceFileLoader"
    again = cudadoctor(*WHAT_IF)
    assert masked(again.stdout) == masked(reference.stdout)
    assert loaders()["cudadoctor.model.facts"][0] == "_Loader"  # written whole again


def test_a_module_without_current_bytecode_is_left_out_of_the_bundle() -> None:
    cudadoctor(*WHAT_IF)
    entries = bundle._read(str(bundle_file()))
    del entries["cudadoctor.model.facts"]
    rewrite(entries)
    cached = Path(importlib.util.cache_from_source(str(REPO_ROOT / "cudadoctor/model/facts.py")))
    saved = cached.read_bytes()
    cached.write_bytes(saved[:8] + b"\0\0\0\0" + saved[12:])  # a stale stamp: not current
    try:
        env = cli_environment({"PYTHONDONTWRITEBYTECODE": "1"})
        subprocess.run([sys.executable, "-m", "cudadoctor", *WHAT_IF], cwd=REPO_ROOT, env=env, capture_output=True, timeout=120)
        assert "cudadoctor.model.facts" not in bundle._read(str(bundle_file()))
    finally:
        cached.write_bytes(saved)


def test_a_bundle_made_for_another_install_is_not_used() -> None:
    cudadoctor(*WHAT_IF)
    entries = bundle._read(str(bundle_file()))
    body = marshal.dumps(("/elsewhere/cudadoctor", entries))
    bundle_file().write_bytes(bundle._head(body) + b"\0" + body)
    assert loaders()["cudadoctor.model.facts"][0] == "SourceFileLoader"


def test_a_source_replaced_with_the_same_size_and_mtime_is_imported_from_its_source(tmp_path: Path) -> None:
    """An installer or `cp -p` that sets mtimes can replace a source with another of the same size
    and mtime; its inode and ctime still differ (nothing but the clock sets ctime)."""
    cudadoctor(*WHAT_IF)
    entries = bundle._read(str(bundle_file()))
    origin, size, mtime, is_package, code, inode, ctime = entries["cudadoctor.model.facts"]
    entries["cudadoctor.model.facts"] = (origin, size, mtime, is_package, code, inode, ctime - 1)
    rewrite(entries)
    assert loaders()["cudadoctor.model.facts"][0] == "SourceFileLoader"
    assert loaders()["cudadoctor.rules"][0] == "_Loader"


@pytest.mark.parametrize("damage", ["entry shape", "code", "flipped byte", "other bytecode version"])
def test_a_damaged_bundle_is_never_run(damage: str) -> None:
    """Whatever a damaged bundle still decodes to, the command imports from the file system and
    answers as always (it used to die in a traceback on every run, --version included)."""
    reference = cudadoctor(*WHAT_IF)
    entries = bundle._read(str(bundle_file()))
    if damage == "entry shape":
        entries["cudadoctor.cli.fast"] = ("x",)  # type: ignore[assignment]
        rewrite(entries)
    elif damage == "code":
        entry = entries["cudadoctor.cli.fast"]
        entries["cudadoctor.cli.fast"] = entry[:4] + (entry[4][: len(entry[4]) // 2],) + entry[5:]
        rewrite(entries)
    elif damage == "flipped byte":
        data = bytearray(bundle_file().read_bytes())
        data[len(data) * 3 // 4] ^= 0xFF
        bundle_file().write_bytes(bytes(data))
    else:
        data = bundle_file().read_bytes()
        head, _, body = data.partition(b"\0")
        other = head.replace(bundle._magic().hex().encode(), b"00000000")
        bundle_file().write_bytes(other + b"\0" + body)
    for args in (WHAT_IF, ["--version"], WHAT_IF):
        run = cudadoctor(*args)
        assert run.returncode in (0, 1) and "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert masked(run.stdout) == masked(reference.stdout)
