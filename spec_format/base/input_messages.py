"""The wording of every input problem (the I rules), by rule name: what the readers
(:mod:`spec_format.base.jsonload`, the runner) say when a file cannot be read or is no JSON
object. Each entry is the template of one I rule (``spec_format/rules/input.py``), which takes
it from here: the readers word their messages without importing the rule registry, and each
rule has one text. A dict holds one template per variant."""

from __future__ import annotations

from typing import Any

from spec_format.base.wording import fill

#: the last problem of a kind listed in one file says how many more there were
_MORE = "{count:,} more {kind} problems in this file not listed"

TEMPLATES: dict[str, str | dict[str, str]] = {
    # I001
    "path-not-found": {
        "path": "{path}: no such file or directory",
        "file": "{path}: no such file",
    },
    # I002 (spec_format.base.bounded words them for every small file and standard input)
    "file-unreadable": {
        "os": "{path}: cannot read: {reason}",
        "inaccessible": "{path} is {kind}",
        "not-a-file": "{path} is {kind}, not a regular file; expected {what}",
        "too-large": "{path}: {size:,} bytes is larger than the {limit:,}-byte limit for {what}",
        "grew-too-large": (
            "{path}: more than that is larger than the {limit:,}-byte limit for {what}"
        ),
        "stdin-closed": "{path}: standard input is closed; pipe a file into it",
        "stdin-os": "{path}: cannot read ({reason})",
        "stdin-too-large": "{path}: more than {limit:,} bytes; this is not {what}",
        "remote": "{reason}",
        "directory-unlistable": (
            "{path}: cannot list the directory ({reason}); drafts below it were not checked. "
            "Fix the permissions, or leave it out of the tree"
        ),
    },
    # I003
    "empty-file": "{path}: the file is empty; expected a JSON object",
    # I004
    "not-utf8": {
        "byte": (
            "{path}:{line}:{column}: byte 0x{byte:02x} is not valid UTF-8; JSON files must be "
            "UTF-8 encoded"
        ),
        "lone-surrogate": (
            "this string holds a lone UTF-16 surrogate escape (like \\ud800) that no UTF-8 file "
            "can hold; readers replace it or fail: remove the escape or complete the surrogate pair"
        ),
        "more": "{count:,} more strings with lone surrogates not listed",
    },
    # I005
    "utf8-bom": (
        "{path}: starts with a UTF-8 byte-order mark, which transformers' json.load refuses; "
        "save the file as UTF-8 without BOM"
    ),
    # I006
    "invalid-json": "{path}:{line}:{column}: not valid JSON: {detail}",
    # I007
    "not-an-object": "{path}: the top-level JSON value is {found}, expected an object ({{...}})",
    # I008
    "nested-too-deep": {
        "recursion": "{path}: JSON nested too deeply to parse; not a config.json",
        "limit": "{path}: JSON nested more than {limit} levels deep; not a config.json",
    },
    # I009
    "duplicate-key": {
        "key": (
            "key {key!r} appears more than once in the same object; Python readers silently keep "
            "the last value, other readers may keep the first: remove the duplicate"
        ),
        "more": _MORE,
    },
    # I010
    "non-finite-number": {
        "literal": (
            "{literal} is not valid JSON (Python accepts it, other readers and JSON Schema tools "
            "do not): write a finite number or null"
        ),
        "out-of-range": (
            "the number {literal} does not fit a 64-bit reader (integers must lie within "
            "+-{max_int:,}, floats within +-1.8e308; Python reads larger floats as Infinity, which "
            "is not JSON): write a realistic value"
        ),
        "more": _MORE,
    },
    # I011
    "no-config-in-directory": {
        # "{path}: " leads, as in every I rule: the text headline already shows the path
        "directory": "{path}: a directory with no config.json in it; {hint}",
        "recursive": "{path}: a directory with no draft config.json anywhere below it{hint}",
        "remote": "{path}: no config.json at its top level",
        "rewrite": "{path}: a directory with no config.json; pass the file or its folder",
    },
    # I012
    "internal-error": (
        "{path}: internal error while checking this input ({error}); this is a bug in specfmt"
    ),
    # I013
    "weights-not-found": {
        "directory": (
            "no model.safetensors or model.safetensors.index.json, so {what} could not "
            "run (exit 3); put the weights next to config.json, or drop {flags} to check the "
            "config alone"
        ),
        "stdin": (
            "the config came from standard input, so {what} could not run (exit 3); pass the "
            "checkpoint directory instead of -"
        ),
        "config-file": (
            "a config.json file was given, so {what} could not run (exit 3); pass the "
            "checkpoint directory (`specfmt validate {parent} {flags}`)"
        ),
    },
}


def message(name: str, variant: str | None = None, **params: Any) -> str:
    """The message of one problem of the I rule named ``name``."""
    return fill(TEMPLATES[name], variant, name, **params)
