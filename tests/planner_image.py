"""An offline "planner" image for the Dockerfile recipe: this checkout's cudadoctor and the
Python running the tests, assembled FROM scratch from the files that Python actually loads.

No base image can be pulled here (the tests never reach the network), so the image is built from
the host: the interpreter and its shared libraries, the standard-library and site-packages
modules a cudadoctor run imports (found by running those commands and reading ``sys.modules``),
the package's data (the table, the schemas), bash, and a ``cudadoctor`` wrapper on PATH."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path
from typing import Iterable, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
SITE = "/opt/planner/site"
SRC = "/opt/planner/src"

_LIST_MODULES = r"""
import contextlib, io, json, sys
import runpy, importlib.util, importlib.machinery  # what `python -m` itself imports
from cudadoctor.cli import bundle, fast, main  # what the console entry (cudadoctor/__main__.py) imports
from cudadoctor.probe import watchdog  # noqa: F401  (the entry's signal handlers)
for args in json.loads(sys.argv[2]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            if fast.run(args) is None:  # as the entry runs a command line: the fast path, else click
                main(args)
        except SystemExit:
            pass
files = sorted({m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)})
with open(sys.argv[1], "w") as handle:
    json.dump(files, handle)
"""


def loaded_files(runs: Sequence[Sequence[str]], scratch: Path) -> list[str]:
    out = scratch / "modules.json"
    # A cache that cannot be written: the listing run parses and validates the table as a run in the
    # image (with no compiled table of its own yet) does, so every module that path needs is listed.
    blocker = scratch / "no-cache"
    blocker.write_text("")
    env = {**os.environ, "CUDADOCTOR_CACHE": str(blocker / "cache")}
    subprocess.run([sys.executable, "-c", _LIST_MODULES, str(out), json.dumps([list(r) for r in runs])], check=True, cwd=REPO_ROOT, env=env)
    return json.loads(out.read_text())


def shared_libraries(paths: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for path in paths:
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            for part in line.split():
                if part.startswith("/"):
                    found.add(part)
    return found


def destination(path: str) -> str:
    """Where a host file goes in the image: the interpreter's own files keep their paths (so its
    prefix is found as usual); site-packages and the checkout go under /opt/planner."""
    real = os.path.realpath(path)
    purelib = os.path.realpath(sysconfig.get_paths()["purelib"])
    platlib = os.path.realpath(sysconfig.get_paths()["platlib"])
    for root, target in ((purelib, SITE), (platlib, SITE), (str(REPO_ROOT), SRC)):
        if real.startswith(root + os.sep):
            return target + real[len(root) :]
    return path


def context_archive(runs: Sequence[Sequence[str]], scratch: Path) -> io.BytesIO:
    python = os.path.realpath(sys.executable)
    base = sys.base_prefix
    files = set(loaded_files(runs, scratch))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files |= {str(p) for p in (stdlib / "encodings").glob("*.py")}
    files.add(str(stdlib / "os.py"))  # the landmark Python looks for to find its prefix
    files.add(str(REPO_ROOT / "cudadoctor" / "__main__.py"))  # `python -m cudadoctor`: not imported by the listing run
    binaries = {python, "/bin/bash"}
    extensions = {f for f in files if f.endswith(".so")}
    libs = shared_libraries(binaries | extensions)
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:

        def add(host_path: str, image_path: str) -> None:
            tar.add(os.path.realpath(host_path), arcname="rootfs" + image_path, recursive=False)

        for path in sorted(files | libs | {"/bin/bash"}):
            add(path, destination(path))
        add(python, f"{base}/bin/python3")
        for data in ("data/compat_table.json", *(f"cudadoctor/schemas/{p.name}" for p in (REPO_ROOT / "cudadoctor" / "schemas").glob("*.json"))):
            add(str(REPO_ROOT / data), f"{SRC}/{data}")
        wrapper = f'#!/bin/bash\nexec {base}/bin/python3 -s -m cudadoctor "$@"\n'.encode()
        dockerfile = "\n".join(
            [
                "FROM scratch",
                "COPY rootfs/ /",
                f"ENV PYTHONHOME={base} PYTHONPATH={SITE}:{SRC} PATH=/usr/local/bin:/bin LANG=C.UTF-8",
                "",
            ]
        ).encode()
        for name, data, mode in (("rootfs/usr/local/bin/cudadoctor", wrapper, 0o755), ("Dockerfile", dockerfile, 0o644)):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    archive.seek(0)
    return archive


def build_planner(host: str, tag: str, runs: Sequence[Sequence[str]], scratch: Path) -> None:
    import docker

    client = docker.DockerClient(base_url=host, timeout=300)
    try:
        client.images.build(fileobj=context_archive(runs, scratch), custom_context=True, tag=tag, rm=True, network_mode="none")
    finally:
        client.close()
