from django.dispatch import Signal

# Sent after commit, at most once per key, period and kind, when a key's spent plus held reaches 80% of a limit
# (`kind="warning"`) or the limit itself, or a call is refused for it (`kind="exceeded"`). Arguments: workspace_id,
# api_key_id, key_name, kind, period ("day" | "month"), limit, spent (micro-credits), resets_at (datetime).
key_budget_alert = Signal()

# Sent after commit by the settlement that takes a workspace's available balance from at-or-above `threshold`
# checks to below: the webhooks app compares it with the workspace's balance.low threshold at that moment.
# Arguments: workspace_id, available_before, available_after (micro-credits).
balance_charged = Signal()
