"""Canonical JSON Schemas. This file only lets the wheel ship them as package data
(``spec_format.schema``); the schemas themselves are the *.json files below."""
