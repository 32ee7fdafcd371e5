"""Replies from people who do not understand or recognise the pitch, plus concrete product questions."""
