"""Days between two ISO dates, without importing ``datetime`` for the common form.

Every `check` asks how old the table is (rules/table.py), and ``datetime`` costs about 2 ms of a
`check`'s 80 to import. The dates it is asked about are nearly always ``YYYY-MM-DD``; those are
counted here, and anything else (another ISO 8601 form, or no date at all) is left to
``datetime.date.fromisoformat``, so the answer is exactly the one it would give. Pure.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional

_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _plain_day_number(text: str) -> Optional[int]:
    """The proleptic Gregorian ordinal of a ``YYYY-MM-DD`` date (as ``date.toordinal``); None when
    ``text`` is not in that form or not a real day."""
    if len(text) != 10 or text[4] != "-" or text[7] != "-":
        return None
    digits = text[:4] + text[5:7] + text[8:]
    if not (digits.isascii() and digits.isdigit()):
        return None
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:])
    if year < 1 or not 1 <= month <= 12:
        return None
    month_days = 29 if month == 2 and _is_leap(year) else _DAYS_IN_MONTH[month - 1]
    if not 1 <= day <= month_days:
        return None
    before = year - 1
    days = before * 365 + before // 4 - before // 100 + before // 400
    days += sum(_DAYS_IN_MONTH[: month - 1]) + (1 if month > 2 and _is_leap(year) else 0)
    return days + day


def iso_date(text: str) -> str:
    """``date.fromisoformat(text).isoformat()``: the date written ``YYYY-MM-DD``; ValueError when
    ``text`` is not an ISO date."""
    if _plain_day_number(text) is not None:
        return text
    import datetime

    return datetime.date.fromisoformat(text).isoformat()


def days_between(earlier: str, later: str) -> Optional[int]:
    """``(date(later) - date(earlier)).days`` for two ISO dates; None when either is not one."""
    first, second = _plain_day_number(earlier), _plain_day_number(later)
    if first is not None and second is not None:
        return second - first
    import datetime  # the rarer forms: datetime is the authority on what ISO 8601 allows

    try:
        return (datetime.date.fromisoformat(later) - datetime.date.fromisoformat(earlier)).days
    except (TypeError, ValueError):
        return None
