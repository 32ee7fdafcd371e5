"""Email addresses: the one normalized form, and the one syntax rule."""

from __future__ import annotations

from dataclasses import dataclass


def normalize_address(email: str | None) -> str:
    """The one form every email address is stored and compared in: trimmed, lower-case.

    Suppression (campaigns), delivery evidence and verification results (leads.verification) and the lead data
    set (leads) all key addresses this way, so a lookup by one app finds what another stored."""
    return (email or "").strip().lower()


# --- the one syntax rule ---------------------------------------------------------------------------------------
# RFC 6761 reserves these top-level names. email-validator rejects all of them as "special-use"; section 6.2 says
# software should treat names under `.test` like any other, and whether any domain receives mail is DNS's answer
# (an operator may point the verifier at a resolver that knows them). So syntax ignores special use; only
# `.invalid` and `.localhost` (RFC 6761 6.4 and 6.3) may be answered as non-existent without a lookup.
SPECIAL_USE_TLDS = ("arpa", "invalid", "local", "localhost", "onion", "test")
NEVER_EXISTS_TLDS = ("invalid", "localhost")
MAX_ADDRESS_LENGTH = 320  # RFC 5321 allows 254; anything far longer is rejected before parsing (cost bound)
_STAND_IN_TLD = "example"


@dataclass(frozen=True)
class ParsedAddress:
    local_part: str  # as given
    domain: str  # lower-case ASCII (IDNA) form
    key: str  # `local@domain`, lower-case: how verification results are stored and looked up
    normalized: str  # the address in its normalized display form, lower-case (campaign leads)

    @property
    def never_exists(self) -> bool:
        """The domain is one RFC 6761 lets us call non-existent without asking DNS."""
        return self.domain.rsplit(".", 1)[-1] in NEVER_EXISTS_TLDS


def parse_address(address) -> ParsedAddress | None:
    """The syntax of an email address, and nothing else (no DNS, no special-use refusal): the one rule the
    verifier, campaign leads and the console share. None when the address is malformed."""
    from email_validator import EmailNotValidError, validate_email

    if not isinstance(address, str) or len(address) > MAX_ADDRESS_LENGTH:
        return None
    text = address.strip()
    local, at, domain = text.rpartition("@")
    if not at or not local or not domain:
        return None
    tld = domain.rsplit(".", 1)[-1]
    special = "." in domain and tld.isascii() and tld.lower() in SPECIAL_USE_TLDS
    stand_in = f"{domain[:len(domain) - len(tld)]}{_STAND_IN_TLD}" if special else domain
    try:
        info = validate_email(f"{local}@{stand_in}", check_deliverability=False)
    except (EmailNotValidError, TypeError, ValueError):
        return None
    ascii_domain = (info.ascii_domain or info.domain).lower()
    normalized = info.normalized
    if special:  # put the real top-level name back
        ascii_domain = ascii_domain[: -len(_STAND_IN_TLD)] + tld.lower()
        normalized = normalized[: -len(_STAND_IN_TLD)] + tld.lower()
    return ParsedAddress(local_part=info.local_part, domain=ascii_domain,
                         key=f"{info.local_part.lower()}@{ascii_domain}", normalized=normalize_address(normalized))
