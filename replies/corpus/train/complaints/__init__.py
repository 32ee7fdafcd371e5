"""Replies to unsolicited sales email that complain about the email itself or the sender's data
(wrong name, wrong company, duplicates, broken formatting, phishing suspicion, data source), with
contrasting unsubscribe, not-interested and interested replies, one module per language."""
