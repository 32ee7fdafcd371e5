from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.money import InvalidCreditString, credits, format_credits, parse_credits


@pytest.mark.parametrize("micros,text", [
    (0, "0"), (200_000, "0.2"), (126_000_000, "126"), (250, "0.00025"), (1, "0.000001"),
    (1_500_000_000, "1500"), (10_500_000, "10.5"), (-5_000_000, "-5"),
])
def test_canonical_strings(micros, text):
    assert format_credits(micros) == text


@pytest.mark.parametrize("text,micros", [
    ("5", 5_000_000), ("0.2", 200_000), ("0.20", 200_000), ("000.5", 500_000), ("1.000000", 1_000_000),
    ("0.000001", 1), ("0", 0), ("  7 ", 7_000_000),
])
def test_parse_accepts_any_decimal_with_at_most_six_places(text, micros):
    assert parse_credits(text) == micros


@pytest.mark.parametrize("text", ["", "1e3", "0.0000001", "1.", ".5", "-1", "abc", "1,5", "NaN", "Infinity", "+1", "1 000",
                                  "\u0665", "\uff15", "1.\u0665", "\u0665.5", "5\n", "\u20035"])
def test_parse_rejects(text):
    with pytest.raises(InvalidCreditString):
        parse_credits(text)


@pytest.mark.parametrize("value", [5, 1.5, None, Decimal("1")])
def test_parse_rejects_non_strings(value):
    with pytest.raises(InvalidCreditString):
        parse_credits(value)


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_roundtrip(micros):
    text = format_credits(micros)
    assert parse_credits(text, allow_negative=True) == micros
    assert "e" not in text.lower()
    if "." in text:
        assert not text.endswith("0") and not text.endswith(".")
        assert len(text.split(".")[1]) <= 6


@given(st.decimals(min_value=0, max_value=10**9, places=6, allow_nan=False, allow_infinity=False))
def test_matches_decimal_arithmetic(d):
    text = format(d, "f")
    assert parse_credits(text) == int(d * 1_000_000)
    assert Decimal(format_credits(parse_credits(text))) == d


def test_credits_literal_helper():
    assert credits("0.2") == 200_000 and credits(10) == 10_000_000


def test_format_refuses_floats():
    with pytest.raises(TypeError):
        format_credits(0.2)
