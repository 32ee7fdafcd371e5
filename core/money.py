"""Credit strings <-> integer micro-credits (CONTRACT section 2).

1 credit = 1,000,000 micro-credits. Canonical strings: no exponent, no trailing zeros, no trailing dot,
"0" for zero, at most 6 decimals. Money never touches a float.
"""

import re
from decimal import Decimal

MICROS_PER_CREDIT = 1_000_000
# ASCII digits only: `\d` would also match "٥" (Arabic-Indic) and "５" (fullwidth), which int() reads as 5.
_CREDIT_RE = re.compile(r"^(?P<sign>-?)(?P<int>[0-9]+)(?:\.(?P<frac>[0-9]{1,6}))?$", re.ASCII)


class InvalidCreditString(ValueError):
    pass


def parse_credits(value: str, *, allow_negative: bool = False) -> int:
    """Parse a decimal credit string into micro-credits. Raises InvalidCreditString."""
    if not isinstance(value, str):
        raise InvalidCreditString("must be a decimal string such as \"5\" or \"0.25\"")
    match = _CREDIT_RE.fullmatch(value.strip(" \t"))
    if not match:
        raise InvalidCreditString("must be a decimal string with at most 6 decimals, such as \"5\" or \"0.25\"")
    if match["sign"] and not allow_negative:
        raise InvalidCreditString("must not be negative")
    micros = int(match["int"]) * MICROS_PER_CREDIT + int((match["frac"] or "").ljust(6, "0") or 0)
    return -micros if match["sign"] else micros


def format_credits(micros: int) -> str:
    """Render micro-credits as a canonical credit string."""
    if not isinstance(micros, int) or isinstance(micros, bool):
        raise TypeError("micro-credits are integers")
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), MICROS_PER_CREDIT)
    if frac == 0:
        return f"{sign}{whole}"
    return f"{sign}{whole}.{str(frac).rjust(6, '0').rstrip('0')}"


def credits(value: str | int | Decimal) -> int:
    """Micro-credits from a literal written in credits, for prices in code: credits("0.2") == 200_000."""
    if isinstance(value, int):
        return value * MICROS_PER_CREDIT
    return parse_credits(str(value), allow_negative=True)


def service_block(request_id: str, charged_micros: int, available_micros: int) -> dict:
    """The `service` part of the billing envelope (CONTRACT section 2): the request id, what the call charged
    and the credits available after it, as credit strings."""
    return {"request_id": request_id, "credits_charged": format_credits(charged_micros),
            "credits_available": format_credits(available_micros)}
