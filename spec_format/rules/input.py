"""Input rules (I): the file exists, is readable, is JSON, and is a speculators config.

The engine and :mod:`spec_format.base.jsonload` emit these findings while reading inputs (the
rule and the parameters of its message); the classes carry the ids, severities and
documentation, and take their message templates from :mod:`spec_format.base.input_messages`,
where the readers find them too.
"""

from __future__ import annotations

from spec_format.base.input_messages import TEMPLATES
from spec_format.base.report import Severity
from spec_format.rules.base import Layer, Rule


class _InputRule(Rule):
    abstract = True
    layer = Layer.INPUT
    engine_emitted = True
    templates = TEMPLATES  # the readers word these messages: the templates live beside them


class PathNotFound(_InputRule):
    """The path given on the command line does not exist."""

    id = "I001"
    name = "path-not-found"
    since = "0.1.0"
    severity = Severity.ERROR


class FileUnreadable(_InputRule):
    """The file exists but cannot be read (permissions, a directory where a file was
    expected, an I/O error), or it is larger than any config could be."""

    id = "I002"
    name = "file-unreadable"
    since = "0.1.0"
    severity = Severity.ERROR


class EmptyFile(_InputRule):
    """The config file is empty."""

    id = "I003"
    name = "empty-file"
    since = "0.1.0"
    severity = Severity.ERROR


class NotUtf8(_InputRule):
    """The file is not valid UTF-8, or a string escapes a lone UTF-16 surrogate."""

    id = "I004"
    name = "not-utf8"
    since = "0.1.0"
    severity = Severity.ERROR


class Utf8Bom(_InputRule):
    """The file starts with a UTF-8 byte-order mark."""

    id = "I005"
    name = "utf8-bom"
    since = "0.1.0"
    severity = Severity.ERROR


class InvalidJson(_InputRule):
    """The file is not valid JSON."""

    id = "I006"
    name = "invalid-json"
    since = "0.1.0"
    severity = Severity.ERROR


class NotAnObject(_InputRule):
    """The top-level JSON value is not an object."""

    id = "I007"
    name = "not-an-object"
    since = "0.1.0"
    severity = Severity.ERROR


class NestedTooDeep(_InputRule):
    """The JSON is nested more deeply than any config (64 levels)."""

    id = "I008"
    name = "nested-too-deep"
    since = "0.1.0"
    severity = Severity.ERROR


class DuplicateKey(_InputRule):
    """A key appears twice in the same JSON object."""

    id = "I009"
    name = "duplicate-key"
    since = "0.1.0"
    severity = Severity.WARNING


class NonFiniteNumber(_InputRule):
    """The file uses `NaN`, `Infinity` or `-Infinity`, which are not JSON, or a number no
    64-bit reader holds."""

    id = "I010"
    name = "non-finite-number"
    since = "0.1.0"
    severity = Severity.ERROR


class NoConfigInDirectory(_InputRule):
    """A directory was given but it holds no `config.json`."""

    id = "I011"
    name = "no-config-in-directory"
    since = "0.1.0"
    severity = Severity.ERROR


class SpecfmtBug(_InputRule):
    """Checking this input hit a bug in specfmt."""

    id = "I012"
    name = "internal-error"
    since = "0.1.0"
    severity = Severity.ERROR


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
