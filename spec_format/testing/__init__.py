"""Helpers for tests and benchmarks: the tiny-checkpoint builder (:mod:`.builder`).

Shipped in the wheel so downstream projects can build test checkpoints from the same tensor
contract; nothing in the validator imports it.
"""
