"""Canonical JSON Schemas. This file only lets the wheel ship them as package data
(``spec_format.schema_data``); the schemas themselves are the *.json files below."""
