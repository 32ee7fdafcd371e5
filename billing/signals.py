from django.dispatch import Signal

# Sent after commit, at most once per key, period and kind, when a key's spent plus held reaches 80% of a limit
# (`kind="warning"`) or the limit itself, or a call is refused for it (`kind="exceeded"`). Arguments: workspace_id,
# api_key_id, key_name, kind, period ("day" | "month"), limit, spent (micro-credits), resets_at (datetime).
key_budget_alert = Signal()

# Sent after commit when a charge (or the scheduler's backstop sweep) took a workspace's available balance below
# its low-balance threshold; once until the balance is back at or above it. Arguments: workspace_id.
balance_low = Signal()
