import secrets
import string

_ALPHABET = string.ascii_lowercase + string.digits
_BASE = len(_ALPHABET)


def new_id(prefix: str, length: int = 24) -> str:
    """Opaque prefixed identifier, e.g. req_3k9x… (lower-case letters and digits, uniformly random).

    One draw from the OS RNG for the whole id, written in base 36 (a draw per character was a measurable cost
    on the LLM passthrough's hot path, which mints an id per request)."""
    n = secrets.randbelow(_BASE**length)
    out = []
    for _ in range(length):
        n, r = divmod(n, _BASE)
        out.append(_ALPHABET[r])
    return prefix + "".join(out)
