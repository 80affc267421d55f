"""Parsers and storage: configs and stdin, verifier configs, checkpoints (local, remote,
sharded), safetensors headers, weight statistics, and the one safe output writer."""
