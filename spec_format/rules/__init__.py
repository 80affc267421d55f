"""Rules: one registry of stable ids, one module per layer."""
