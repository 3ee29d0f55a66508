"""Command line: the fast path (cli/fast.py) for the common command lines, the click group
(cli/group.py) for everything else, over parse -> probe -> check -> render.

Exit status (a contract for scripts): 0 nothing fails, 1 something fails (or warns under
--strict; for `recommend`: nothing fits), 2 usage error or unreadable input, 3 internal error.
This package imports nothing by itself: ``cli`` and ``main`` load the click group on first use.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .commands import COMMANDS
    from .errors import InputError
    from .group import cli, main


def __getattr__(name: str) -> Any:
    # Nothing is imported with the package: the entry point imports cli.bundle before anything else.
    if name in ("cli", "main"):
        from . import group

        return getattr(group, name)
    if name == "COMMANDS":
        from .commands import COMMANDS

        return COMMANDS
    if name == "InputError":
        from .errors import InputError

        return InputError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["COMMANDS", "InputError", "cli", "main"]
