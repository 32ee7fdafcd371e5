"""Replies to sales emails that give reasons: explained declines, neutral/administrative replies, and interest with a constraint."""
