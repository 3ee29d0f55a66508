"""Where cudadoctor keeps what it stores for later runs: ``$CUDADOCTOR_CACHE``, else
``$XDG_CACHE_HOME/cudadoctor``, else ``~/.cache/cudadoctor`` (the `table update` overlay, the
compiled table, the command's compiled modules). Imports nothing but ``os``, so that the entry
point can find the compiled modules before it imports anything else."""

from __future__ import annotations

import os
from typing import Mapping, Optional

CACHE_ENV = "CUDADOCTOR_CACHE"


def cache_dir(environ: Optional[Mapping[str, str]] = None) -> str:
    environ = os.environ if environ is None else environ
    if environ.get(CACHE_ENV):
        return environ[CACHE_ENV]
    if environ.get("XDG_CACHE_HOME"):
        return os.path.join(environ["XDG_CACHE_HOME"], "cudadoctor")
    return os.path.join(os.path.expanduser("~"), ".cache", "cudadoctor")
