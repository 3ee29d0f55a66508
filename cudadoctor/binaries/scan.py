"""What a scan read: the CUDA binaries of an environment, a directory or a wheel, each with the
package that installed it."""

from __future__ import annotations

from typing import Optional

from ..model.record import record
from .code import BinaryCode

ENVIRONMENT = "environment"
DIRECTORY = "directory"
WHEEL = "wheel"
IMAGE = "image"


@record
class ScannedFile:
    """One ELF file met by a scan: its GPU code, or why it could not be read."""

    path: str  # as the user would name it: relative to the site-packages or the wheel's root
    package: Optional[str]  # the distribution whose RECORD lists it (None: no package owns it)
    version: Optional[str]
    code: Optional[BinaryCode]
    error: Optional[str] = None


@record
class ScanSource:
    """One thing scanned, and the ELF files in it (files without GPU code included)."""

    kind: str  # environment | directory | wheel | image
    location: str
    files: tuple[ScannedFile, ...]
    python: Optional[str] = None  # the interpreter whose environment this is
