"""Step templates: `{{first_name}}`, `{{last_name}}`, `{{company_name}}`, `{{email}}`, any `custom` key, and a
fallback after a bar: `{{first_name|there}}`. An unknown variable is refused when the campaign is created."""

from __future__ import annotations

import re

STANDARD_VARIABLES = ("first_name", "last_name", "company_name", "email")
VARIABLE_RE = re.compile(r"\{\{\s*([^{}|]*?)\s*(?:\|([^{}]*))?\}\}")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def variables_in(text: str) -> list[str]:
    """Variable names used in `text` (in order, with repeats)."""
    return [m.group(1) for m in VARIABLE_RE.finditer(text or "")]


def unknown_variables(text: str, allowed: set[str]) -> list[str]:
    return sorted({name for name in variables_in(text) if name not in allowed or not NAME_RE.match(name)})


def lead_values(*, email: str, first_name: str = "", last_name: str = "", company_name: str = "",
                custom: dict | None = None) -> dict[str, str]:
    values = {k: _text(v) for k, v in (custom or {}).items()}
    values.update({"first_name": _text(first_name), "last_name": _text(last_name),
                   "company_name": _text(company_name), "email": _text(email)})
    return values


def render(text: str, values: dict[str, str]) -> str:
    """Substitute every variable; an empty or missing value takes the fallback (or becomes empty)."""
    def sub(m: re.Match) -> str:
        value = values.get(m.group(1), "")
        if value.strip():
            return value
        return (m.group(2) or "").strip()

    return VARIABLE_RE.sub(sub, text or "")


def _text(value) -> str:
    """A lead value as one line of text (no CR/LF: values also land in Subject and To headers)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return " ".join(str(value).split()) if any(c in str(value) for c in "\r\n\t\v\f") else str(value)
