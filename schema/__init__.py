"""Canonical JSON Schemas. This file only lets the wheel ship them as package data
(``spec_format.schema``, mapped from this folder by pyproject.toml); the schemas themselves are
the *.json files below. A regular package rather than a namespace one: Python 3.10's
importlib.resources supports namespace packages only in part."""
