"""TOML text (config and families files) as a dict, every failure one error of the caller's type."""

from __future__ import annotations

import sys
from typing import Any


def load_toml(text: str, what: str, error: type[Exception]) -> dict[str, Any]:
    """``what`` names the kind of file in the message ("config file", "families file")."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the backport with the same API
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"not valid TOML ({exc})") from None
    except RecursionError:
        raise error(f"nested too deeply to be a {what}") from None
    except ValueError:  # an integer over CPython's 4300-digit limit
        raise error(f"not a usable {what} (a number in it is too long)") from None
