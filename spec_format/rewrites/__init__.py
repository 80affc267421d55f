"""Rewrites: the pipeline shared by migrate, fix and convert (read, rewrite, write, batch), the
migration chain, fix and the version history."""
