"""Small, exact version types: NVIDIA driver versions, CUDA versions, compute capabilities.

Each parser raises :class:`VersionError` (a ``ValueError``) with a message that names the bad
value and what is accepted, so the CLI can turn it into a one-line usage error.
"""

from __future__ import annotations

import re

from .record import record
from .text import quoted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

__all__ = [
    "VersionError",
    "DriverVersion",
    "CudaVersion",
    "ComputeCapability",
    "compare_dotted",
]


class VersionError(ValueError):
    """A version string that cannot be parsed."""


_DRIVER_RE = re.compile(r"^\d{1,4}(?:\.\d{1,4}){0,2}\Z", re.ASCII)
_CUDA_RE = re.compile(r"^\d{1,3}(?:\.\d{1,4}){0,2}\Z", re.ASCII)
_CC_RE = re.compile(r"^(?:(?P<dot>\d{1,2})\.(?P<minor>\d)|(?:sm_?|compute_)?(?P<packed>\d{2,3})[af]?)\Z", re.ASCII)



def _numbers(text: str) -> tuple[int, ...]:
    return tuple(map(int, text.split(".")))


def compare_dotted(left: tuple[int, ...], right: tuple[int, ...]) -> int:
    """Compare dotted numeric versions component by component; missing components count as 0."""
    width = max(len(left), len(right))
    a = left + (0,) * (width - len(left))
    b = right + (0,) * (width - len(right))
    return (a > b) - (a < b)


class _Dotted:
    """Ordering and hashing shared by the dotted version types (trailing zeros do not matter).
    Ordered by the cached keys: with trailing zeros dropped, comparing the tuples is comparing
    the versions as compare_dotted pads them (a key that is a prefix of another is the smaller)."""

    numbers: tuple[int, ...]

    def _key(self) -> tuple[int, ...]:
        # Cached in the instance dict (records have one): the table's
        # validation compares versions tens of thousands of times.
        cached = self.__dict__.get("_key_cache")
        if cached is None:
            nums = list(self.numbers)
            while len(nums) > 1 and nums[-1] == 0:
                nums.pop()
            cached = self.__dict__["_key_cache"] = tuple(nums)
        return cached

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        # Cached too: the table's versions key the memos every host's check looks up.
        cached = self.__dict__.get("_hash_cache")
        if cached is None:
            cached = self.__dict__["_hash_cache"] = hash((type(self).__name__, self._key()))
        return cached

    def __lt__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() < other._key()

    def __le__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() <= other._key()

    def __gt__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() > other._key()

    def __ge__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() >= other._key()


@record(eq=False)
class DriverVersion(_Dotted):
    """An NVIDIA driver version such as ``535.104.05``; the raw text is kept for display."""

    raw: str
    numbers: tuple[int, ...]

    @classmethod
    def parse(cls, text: str) -> "DriverVersion":
        value = str(text).strip()
        if not _DRIVER_RE.match(value):
            raise VersionError(
                f"invalid driver version {quoted(text)}: expected numbers separated by dots, "
                "such as 535.104.05, 570.26 or 550"
            )
        return cls(value, _numbers(value))

    @property
    def branch(self) -> int:
        """The driver branch (R535, R550, ...): the first component."""
        return self.numbers[0]

    def __str__(self) -> str:
        return self.raw


@record(eq=False)
class CudaVersion(_Dotted):
    """A CUDA version such as ``12.4`` or ``12.4.1``."""

    numbers: tuple[int, ...]

    @classmethod
    def parse(cls, text: str) -> "CudaVersion":
        value = str(text).strip()
        if not _CUDA_RE.match(value):
            raise VersionError(
                f"invalid CUDA version {quoted(text)}: expected MAJOR.MINOR[.PATCH], such as 12.4 or 12.4.1"
            )
        numbers = _numbers(value)
        if len(numbers) == 1:
            numbers = numbers + (0,)
        return cls(numbers)

    @classmethod
    def from_nvml(cls, value: int) -> "CudaVersion":
        """NVML and cuDriverGetVersion encode CUDA 12.4 as 12040 (1000*major + 10*minor)."""
        if value <= 0:
            raise VersionError(f"invalid CUDA driver version number {quoted(value)}")
        return cls((value // 1000, (value % 1000) // 10))

    @property
    def major(self) -> int:
        return self.numbers[0]

    @property
    def minor(self) -> int:
        return self.numbers[1] if len(self.numbers) > 1 else 0

    @property
    def major_minor(self) -> "CudaVersion":
        if len(self.numbers) == 2:
            return self
        return CudaVersion((self.numbers[0], self.numbers[1] if len(self.numbers) > 1 else 0))

    def __str__(self) -> str:
        # Kept beside the key cache: the table's CUDA versions are written into every host's reasons.
        text = self.__dict__.get("_text_cache")
        if text is None:
            text = self.__dict__["_text_cache"] = ".".join(str(n) for n in self.numbers)
        return text


@record(eq=False)
class ComputeCapability:
    """A compute capability such as 8.6 (sm_86)."""

    major: int
    minor: int

    # Written out rather than generated: the table's validation compares and hashes these
    # tens of thousands of times.
    def __eq__(self, other: object) -> bool:
        if type(other) is not ComputeCapability:
            return NotImplemented
        return self.major == other.major and self.minor == other.minor

    def __hash__(self) -> int:
        return hash((self.major, self.minor))

    def __lt__(self, other: object) -> bool:
        if type(other) is not ComputeCapability:
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    def __le__(self, other: object) -> bool:
        if type(other) is not ComputeCapability:
            return NotImplemented
        return (self.major, self.minor) <= (other.major, other.minor)

    def __gt__(self, other: object) -> bool:
        if type(other) is not ComputeCapability:
            return NotImplemented
        return (self.major, self.minor) > (other.major, other.minor)

    def __ge__(self, other: object) -> bool:
        if type(other) is not ComputeCapability:
            return NotImplemented
        return (self.major, self.minor) >= (other.major, other.minor)

    @classmethod
    def parse(cls, text: str) -> "ComputeCapability":
        value = str(text).strip().lower()
        match = _CC_RE.match(value)
        if not match:
            raise VersionError(
                f"invalid compute capability {quoted(text)}: expected MAJOR.MINOR such as 8.6, or sm_86"
            )
        if match.group("dot") is not None:
            return cls(int(match.group("dot")), int(match.group("minor")))
        packed = match.group("packed")
        return cls(int(packed[:-1]), int(packed[-1]))

    @property
    def sm(self) -> str:
        # Kept beside the fields, as CudaVersion keeps its text: a parsed compute capability is one
        # object per table (host/view.py), named in every GPU's findings of every host.
        text = self.__dict__.get("_sm_cache")
        if text is None:
            text = self.__dict__["_sm_cache"] = f"sm_{self.major}{self.minor}"
        return text

    def runs_sass_built_for(self, built: "ComputeCapability") -> bool:
        """Machine code (SASS) for sm_X.Y runs on sm_X.Z when Z >= Y: same major, not lower minor."""
        return self.major == built.major and self.minor >= built.minor

    def can_jit_ptx_built_for(self, built: "ComputeCapability") -> bool:
        """PTX for compute_X.Y can be JIT-compiled by the driver for any GPU of X.Y or newer."""
        return self >= built

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


@record
class PackageVersion:
    """A Python package's version (PEP 440), as pip and torch.__version__ write it: "2.5.1+cu121"."""

    public: str  # "2.5.1", "2.6.0.dev20241112", "2.7.0rc1"
    release: tuple[int, ...]  # (2, 5, 1)
    local: Optional[str]  # "cu121", None

    @property
    def major_minor(self) -> Optional[str]:
        """"2.5": the PyTorch release the table knows it by."""
        return f"{self.release[0]}.{self.release[1]}" if len(self.release) >= 2 else None


_PLAIN_PEP440 = re.compile(r"^(\d+(?:\.\d+)*)(?:\+([a-z0-9]+(?:\.[a-z0-9]+)*))?$")


def parse_package_version(text: str) -> PackageVersion:
    """PEP 440 parsing. The forms a torch wheel has ("2.5.1", "2.5.1+cu121") are read directly;
    anything else (pre-releases, dev builds, epochs) goes to ``packaging``, imported only then:
    it costs a `cudadoctor check` several milliseconds (docs/performance.md). Raises VersionError."""
    text = text.strip()
    plain = _PLAIN_PEP440.match(text)
    if plain:
        return PackageVersion(plain.group(1), tuple(int(n) for n in plain.group(1).split(".")), plain.group(2))
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(text)
    except InvalidVersion:
        raise VersionError(f"{text!r} is not a PEP 440 version") from None
    return PackageVersion(parsed.public, parsed.release, parsed.local)
