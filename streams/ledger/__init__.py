"""The write-once ledger: its Redis key layout (keys), the store interface, Redis (redis) and memory."""
