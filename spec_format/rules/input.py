"""Input rules (I): the file exists, is readable, is JSON, and is a speculators config.

The engine and :mod:`spec_format.jsonload` emit these findings while reading inputs (the
rule and the parameters of its message); the classes carry the ids, severities, message
templates and documentation.
"""

from __future__ import annotations

from spec_format.report import Severity
from spec_format.rules.base import Layer, Rule


class _InputRule(Rule):
    abstract = True
    layer = Layer.INPUT
    engine_emitted = True


class PathNotFound(_InputRule):
    """The path given on the command line does not exist."""

    id = "I001"
    name = "path-not-found"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "path": "{path}: no such file or directory",
        "file": "{path}: no such file",
    }


class FileUnreadable(_InputRule):
    """The file exists but cannot be read (permissions, a directory where a file was
    expected, an I/O error), or it is larger than any config could be."""

    id = "I002"
    name = "file-unreadable"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "os": "{path}: cannot read: {reason}",
        "not-a-file": "{path}: {kind}; expected a JSON file",
        "too-large": (
            "{path}: {size:,} bytes is larger than the {limit:,}-byte limit for a JSON config; "
            "this is not a config.json"
        ),
        "remote": "{reason}",
    }


class EmptyFile(_InputRule):
    """The config file is empty."""

    id = "I003"
    name = "empty-file"
    since = "0.1.0"
    severity = Severity.ERROR
    template = "{path}: the file is empty; expected a JSON object"


class NotUtf8(_InputRule):
    """The file is not valid UTF-8, or a string escapes a lone UTF-16 surrogate."""

    id = "I004"
    name = "not-utf8"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{path}:{line}:{column}: byte 0x{byte:02x} is not valid UTF-8; JSON files must be "
        "UTF-8 encoded"
    )


class Utf8Bom(_InputRule):
    """The file starts with a UTF-8 byte-order mark."""

    id = "I005"
    name = "utf8-bom"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{path}: starts with a UTF-8 byte-order mark, which transformers' json.load refuses; "
        "save the file as UTF-8 without BOM"
    )


class InvalidJson(_InputRule):
    """The file is not valid JSON."""

    id = "I006"
    name = "invalid-json"
    since = "0.1.0"
    severity = Severity.ERROR
    template = "{path}:{line}:{column}: not valid JSON: {detail}"


class NotAnObject(_InputRule):
    """The top-level JSON value is not an object."""

    id = "I007"
    name = "not-an-object"
    since = "0.1.0"
    severity = Severity.ERROR
    template = "{path}: the top-level JSON value is {found}, expected an object ({{...}})"


class NestedTooDeep(_InputRule):
    """The JSON is nested more deeply than any config (64 levels)."""

    id = "I008"
    name = "nested-too-deep"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "recursion": "{path}: JSON nested too deeply to parse; not a config.json",
        "limit": "{path}: JSON nested more than {limit} levels deep; not a config.json",
    }


class DuplicateKey(_InputRule):
    """A key appears twice in the same JSON object."""

    id = "I009"
    name = "duplicate-key"
    since = "0.1.0"
    severity = Severity.WARNING
    template = (
        "key {key!r} appears more than once in the same object; Python readers silently keep "
        "the last value, other readers may keep the first: remove the duplicate"
    )


class NonFiniteNumber(_InputRule):
    """The file uses `NaN`, `Infinity` or `-Infinity`, which are not JSON, or a number no
    64-bit reader holds."""

    id = "I010"
    name = "non-finite-number"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{literal} is not valid JSON (Python accepts it, other readers and JSON Schema tools "
        "do not): write a finite number or null"
    )


class NoConfigInDirectory(_InputRule):
    """A directory was given but it holds no `config.json`."""

    id = "I011"
    name = "no-config-in-directory"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        # "{path}: " leads, as in every I rule: the text headline already shows the path
        "directory": "{path}: a directory with no config.json in it; {hint}",
        "recursive": "{path}: a directory with no draft config.json anywhere below it{hint}",
        "remote": "{path}: no config.json at its top level",
    }


class InternalError(_InputRule):
    """Checking this input hit a bug in specfmt."""

    id = "I012"
    name = "internal-error"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{path}: internal error while checking this input ({error}); this is a bug in specfmt"
    )


#: jsonload problem kind -> rule
BY_PROBLEM_KIND: dict[str, type[Rule]] = {
    "not-found": PathNotFound,
    "unreadable": FileUnreadable,
    "too-large": FileUnreadable,
    "empty": EmptyFile,
    "not-utf8": NotUtf8,
    "bom": Utf8Bom,
    "not-json": InvalidJson,
    "not-object": NotAnObject,
    "too-deep": NestedTooDeep,
    "duplicate-key": DuplicateKey,
    "non-finite-number": NonFiniteNumber,
    "number-out-of-range": NonFiniteNumber,
    "lone-surrogate": NotUtf8,
}


class WeightsNotFound(_InputRule):
    """`--deep` or `--scan-weights` was asked for, but the input has no weights to read."""

    id = "I013"
    name = "weights-not-found"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
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
    }
