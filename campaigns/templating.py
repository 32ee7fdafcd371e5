"""Step templates: `{{first_name}}`, `{{last_name}}`, `{{company_name}}`, `{{email}}`, any `custom` key, and a
fallback after a bar: `{{first_name|there}}`. An unknown variable is refused when the campaign is created."""

from __future__ import annotations

import hashlib
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


# --- spintax: `{{RANDOM | A | B | …}}` ---------------------------------------------------------------------
# Two or more options, not nested; an option may hold variables (`{{RANDOM | Hi {{first_name}} | Hello}}`).
# Which option a lead gets is a hash of (seed, place): the same lead always reads the same text in the same place
# (retries, the launch preview, the console), and different leads spread over the options.
SPIN_OPEN_RE = re.compile(r"\{\{\s*RANDOM\s*(?=\||\}\})", re.IGNORECASE)


class SpintaxError(ValueError):
    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.position = position  # 1-based character position of the `{{RANDOM` that is wrong


def _spin_blocks(text: str) -> list[tuple[int, int, list[str]]]:
    """[(start, end, options)] for every spintax block, in order. Raises SpintaxError for an unbalanced block,
    a nested one, fewer than two options or an empty option."""
    blocks = []
    pos = 0
    while True:
        m = SPIN_OPEN_RE.search(text, pos)
        if m is None:
            return blocks
        start, i, depth = m.start(), m.end(), 1
        where = start + 1
        options: list[str] = []
        current = i
        end = None
        while i < len(text):
            if text.startswith("{{", i):
                if SPIN_OPEN_RE.match(text, i):
                    raise SpintaxError(f"spintax at character {where}: {{{{RANDOM …}}}} cannot be nested", where)
                depth += 1
                i += 2
            elif text.startswith("}}", i):
                depth -= 1
                if depth == 0:
                    end = i + 2
                    break
                i += 2
            elif text[i] == "|" and depth == 1:
                options.append(text[current:i])
                current = i + 1
                i += 1
            else:
                i += 1
        if end is None:
            raise SpintaxError(f"spintax at character {where}: unbalanced {{{{RANDOM …}}}} (no closing }}}})", where)
        options.append(text[current:end - 2])
        options = options[1:]  # the text between RANDOM and the first bar is empty by construction
        if len(options) < 2:
            raise SpintaxError(f"spintax at character {where}: {{{{RANDOM | A | B}}}} needs at least two options",
                               where)
        for n, option in enumerate(options, 1):
            if not option.strip():
                raise SpintaxError(f"spintax at character {where}: option {n} is empty", where)
        blocks.append((start, end, [o.strip() for o in options]))
        pos = end


def spintax_problem(text: str) -> str | None:
    """A message naming the position of the first broken spintax block in `text`, or None."""
    try:
        _spin_blocks(text or "")
    except SpintaxError as exc:
        return str(exc)
    return None


def spintax_flatten(text: str) -> str:
    """`text` with every block replaced by all its options (for checking the variables they hold)."""
    out, last = [], 0
    for start, end, options in _spin_blocks(text or ""):
        out += [text[last:start], " ".join(options)]
        last = end
    return "".join(out) + (text or "")[last:]


def spin_choice(seed: str, place: int, options: int) -> int:
    """Deterministic option index for this seed and place (blake2b: stable across processes and versions)."""
    digest = hashlib.blake2b(f"{seed}#{place}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % options


def spin(text: str, seed: str) -> str:
    """Choose one option of every block, deterministically from `seed` (campaign, lead, step, variant, field)."""
    out, last = [], 0
    for place, (start, end, options) in enumerate(_spin_blocks(text or "")):
        out += [text[last:start], options[spin_choice(seed, place, len(options))]]
        last = end
    return "".join(out) + (text or "")[last:]


# --- variants: a step is `{subject?, body}` or `{variants: [{subject?, body}, …]}` ---------------------------
def step_variant_count(step: dict) -> int:
    """How many variants the step has (0: a plain step with one text)."""
    return len(step.get("variants") or [])


def step_text(step: dict, variant: int | None) -> dict:
    """{"subject", "body"} of this step for the chosen variant (a plain step ignores `variant`)."""
    variants = step.get("variants") or []
    if variants:
        chosen = variants[variant if variant is not None and 0 <= variant < len(variants) else 0]
        return {"subject": chosen.get("subject"), "body": chosen["body"]}
    return {"subject": step.get("subject"), "body": step["body"]}


def assignment_key(campaign_id, step: int, email: str) -> int:
    """The sort key that spreads leads over a step's variants: a hash of (campaign, step, lead)."""
    digest = hashlib.blake2b(f"{campaign_id}|{step}|{email}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def assign_variants(campaign_id, steps: list[dict], emails: list[str]) -> list[list[int | None]]:
    """Per lead (in the order of `emails`), the variant index of every step (None for a plain step).

    Balanced and deterministic: for each step with k variants the leads are ranked by `assignment_key` and
    the lead of rank r gets variant r mod k, so every variant gets floor(n/k) or ceil(n/k) leads (exactly
    even, never off by more than one), which lead gets which depends only on the campaign, step and address,
    and the steps are independent of each other (a lead's variant at step 1 says nothing about step 2)."""
    out: list[list[int | None]] = [[None] * len(steps) for _ in emails]
    for s, step in enumerate(steps):
        k = step_variant_count(step)
        if not k:
            continue
        ranked = sorted(range(len(emails)), key=lambda i: (assignment_key(campaign_id, s, emails[i]), emails[i]))
        for rank, i in enumerate(ranked):
            out[i][s] = rank % k
    return out
