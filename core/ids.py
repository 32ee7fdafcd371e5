import secrets
import string

_ALPHABET = string.ascii_lowercase + string.digits


def new_id(prefix: str, length: int = 24) -> str:
    """Opaque prefixed identifier, e.g. req_3k9x…"""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))
