"""The one error the binary readers raise."""

from __future__ import annotations


class BinaryFormatError(ValueError):
    """A file that is not the ELF or fat binary it claims to be: truncated, corrupt, too large or
    hostile. The message is one line that says what is wrong and where."""
