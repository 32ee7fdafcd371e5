def normalize_address(email: str | None) -> str:
    """The one form every email address is stored and compared in: trimmed, lower-case.

    Suppression (campaigns), delivery evidence and verification results (leads.verification) and the lead data
    set (leads) all key addresses this way, so a lookup by one app finds what another stored."""
    return (email or "").strip().lower()
