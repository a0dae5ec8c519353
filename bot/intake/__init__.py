"""Webhooks in: verify the signature on the raw bytes, persist the delivery, answer 202."""
