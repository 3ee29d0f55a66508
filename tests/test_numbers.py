"""One parser for numbers from outside: ASCII digits, a length bound, finite floats."""

import pytest

from cudadoctor.model.numbers import NumberError, is_ascii_integer, json_integer, parse_decimal, parse_int, parse_seconds


@pytest.mark.parametrize("text", ["²", "٣", "１", "1_0", " 1", "-1", "+1", "1e3", "", "0x10", "1.0"])
def test_parse_int_refuses_what_int_would_take_or_is_not_plain_digits(text):
    with pytest.raises(NumberError):
        parse_int(text, "--gpus")


def test_parse_int_bounds_length_before_converting():
    with pytest.raises(NumberError, match="too long"):
        parse_int("9" * 5000, "count")
    assert parse_int("0" * 30 + "7", "count") == 7


def test_parse_int_range_and_message_names_the_value():
    assert parse_int("8", "count", maximum=8) == 8
    with pytest.raises(NumberError, match=r"count '9' is out of range: expected 0 to 8"):
        parse_int("9", "count", maximum=8)


@pytest.mark.parametrize("text,value", [("1", 1.0), ("2.5", 2.5), (".5", 0.5), ("10.", 10.0)])
def test_parse_decimal_accepts_plain_decimals(text, value):
    assert parse_decimal(text) == value


@pytest.mark.parametrize("text", ["inf", "nan", "1e400", "١", "１", "1_0", "1,5", "-1", "9" * 400])
def test_parse_decimal_refuses_non_ascii_infinite_and_long(text):
    with pytest.raises(NumberError):
        parse_decimal(text)


def test_parse_seconds_strips_blanks_and_bounds():
    assert parse_seconds(" 5 ", "--timeout", low=0.1, high=600) == 5.0
    with pytest.raises(NumberError, match="0.1 to 600 seconds"):
        parse_seconds("601", "--timeout", low=0.1, high=600)


def test_is_ascii_integer():
    assert is_ascii_integer("123")
    assert not is_ascii_integer("²")
    assert not is_ascii_integer("1" * 20)


def test_json_integer_refuses_bools_floats_and_out_of_range():
    assert json_integer(3, maximum=8) == 3
    for bad in (True, 3.0, "3", -1, 10**5000):
        with pytest.raises(NumberError):
            json_integer(bad, maximum=8)
