"""Runnable examples of using evidence-chain from an agent harness (``python -m examples.agent_loop``)."""
