"""Re-reading topics: compare a range with the ledger (compare), and move the workers' offsets
safely (reset)."""
