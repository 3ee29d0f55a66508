"""Reading a file the user named (snapshot, table, families file) with one-line errors."""

from __future__ import annotations


def read_user_file(path: str, what: str, error: type[Exception]) -> str:
    """The file's text; every failure raises ``error("<what> <path>: <reason>")``."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise error(f"{what} {path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{what} {path}: is a directory") from None
    except PermissionError:
        raise error(f"{what} {path}: permission denied") from None
    except UnicodeDecodeError:
        raise error(f"{what} {path}: not UTF-8 text") from None
    except OSError as exc:
        raise error(f"{what} {path}: cannot be read ({exc.strerror or exc})") from None
