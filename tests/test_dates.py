"""Days between two ISO dates (model/dates.py) are exactly what ``datetime`` counts, for the plain
``YYYY-MM-DD`` form it counts itself and for every other text it hands to ``datetime``."""

from __future__ import annotations

import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from cudadoctor.model.dates import days_between, iso_date


def datetime_days(earlier: str, later: str) -> "int | None":
    try:
        return (datetime.date.fromisoformat(later) - datetime.date.fromisoformat(earlier)).days
    except ValueError:
        return None


@settings(max_examples=500)
@given(st.dates(), st.dates())
def test_plain_dates_count_as_datetime_counts_them(first: datetime.date, second: datetime.date) -> None:
    assert days_between(first.isoformat(), second.isoformat()) == (second - first).days


# Near misses of YYYY-MM-DD: digits and dashes in the right places, with days, months and years
# that do not exist (a 29 February off leap years, month 13, day 00, year 0000), and other forms.
near_misses = st.builds(
    lambda year, month, day, sep: f"{year:04d}{sep}{month:02d}{sep}{day:02d}",
    st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32), st.sampled_from(["-", "", "/"]),
)  # fmt: skip


@settings(max_examples=500)
@given(near_misses | st.text(alphabet="0123456789-WT:", max_size=12), st.dates().map(datetime.date.isoformat))
def test_any_other_text_gets_datetimes_answer(text: str, plain: str) -> None:
    assert days_between(text, plain) == datetime_days(text, plain)
    assert days_between(plain, text) == datetime_days(plain, text)


def test_the_days_around_leap_days_and_century_years() -> None:
    assert days_between("2024-02-28", "2024-03-01") == 2
    assert days_between("2100-02-28", "2100-03-01") == 1  # 2100 is not a leap year
    assert days_between("2000-02-28", "2000-03-01") == 2  # 2000 is
    assert days_between("2025-02-29", "2025-03-01") is None
    assert days_between("2026-12-02", "2026-08-04") == -120
    assert days_between("20260804", "2026-12-02") == 120  # a form datetime reads, left to it


@settings(max_examples=300)
@given(near_misses | st.text(alphabet="0123456789-WT:", max_size=12) | st.dates().map(datetime.date.isoformat))
def test_a_date_is_written_plainly_as_datetime_writes_it(text: str) -> None:
    try:
        expected: "str | None" = datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        expected = None
    try:
        written: "str | None" = iso_date(text)
    except ValueError:
        written = None
    assert written == expected
