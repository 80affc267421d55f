"""Schema rules (S): dispatch on speculators_model_type, then the type's JSON Schema.

Dispatch happens before JSON Schema validation so users never see the noise of a failed
``oneOf`` over seven types. Each JSON Schema error becomes one finding whose rule id
depends on the failed keyword; errors under ``anyOf``/``oneOf`` are collapsed to the best
matching sub-error (as check-jsonschema does).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from spec_format.base.jsonload import pointer_from_parts, spelled
from spec_format.base.report import MAX_FINDINGS_PER_RULE, Severity
from spec_format.facts import schemas
from spec_format.rules.base import Hit, Layer, Rule

if TYPE_CHECKING:
    from jsonschema import ValidationError


class _SchemaRule(Rule):
    abstract = True
    layer = Layer.SCHEMA
    engine_emitted = True
    severity = Severity.ERROR


class MissingModelType(_SchemaRule):
    """`speculators_model_type` is missing: the file is not a speculators config."""

    id = "S001"
    name = "missing-model-type"
    since = "0.1.0"
    template = {
        "with-speculators-config": (
            "speculators_model_type is missing although speculators_config is present; add "
            "it{hint} (one of {known})"
        ),
        "absent": (
            "speculators_model_type is missing, so this is not a speculators draft config; "
            "add it (one of {known})"
        ),
        "not-a-string": "speculators_model_type must be a string, not {found}",
    }


class UnknownModelType(_SchemaRule):
    """`speculators_model_type` names no type that any speculators release knows."""

    id = "S002"
    name = "unknown-model-type"
    since = "0.1.0"
    template = "unknown speculators_model_type {type!r}{hint}; use one of the known types: {known}"


class RetiredModelType(_SchemaRule):
    """The config uses a type that current releases dropped (`eagle`, `independent`, `mlp`)."""

    id = "S003"
    name = "retired-model-type"
    since = "0.1.0"
    legacy_severity = Severity.WARNING
    template = {
        "dispatch": (
            "speculators_model_type {type!r}{hint} ({retired.what}) was last readable by "
            "speculators "
            "{retired.last_version} ({retired.note}); validate it with --format-version "
            "{retired.last_version}, or see `specfmt migrate` for what carries over"
        ),
        "checked": (
            "speculators_model_type {type!r} ({retired.what}) was last readable by speculators "
            "{retired.last_version} ({retired.note}); checked against format {version}, but "
            "no current reader loads it"
        ),
    }


class ThirdPartyConfig(_SchemaRule):
    """The file is a draft config from another project, not the speculators format."""

    id = "S004"
    name = "third-party-config"
    since = "0.1.0"
    template = {
        "z-lab-dflash": (
            "this is a z-lab DFlash config (dflash_config / DFlash architecture), not the "
            "speculators format; convert it with `specfmt convert {ckpt} -o OUT --verifier "
            "VERIFIER` (OUT a new folder, VERIFIER the target model's), which also shifts "
            "target_layer_ids by +1"
        ),
        "safeailab-eagle3": (
            "this is a SafeAILab/NVIDIA-style EAGLE-3 config ({what}), not the speculators "
            "format; convert it with `specfmt convert {ckpt} -o OUT --verifier VERIFIER` (OUT "
            "a new folder, VERIFIER the target model's), which takes the aux layer ids from "
            "the config (eagle_config) or --aux-layer-ids"
        ),
        "pre-0.1": (
            "this is the pre-0.1 speculators draft format (speculators_algorithm + "
            "draft_model); no release reads it: re-export the draft with a current release"
        ),
        "eagle1": (
            "this looks like an EAGLE-1/2 config ({what}), not the speculators format; EAGLE-1 "
            "drafts (speculators type 'eagle') are only readable by speculators 0.1-0.4"
        ),
        "eagle1-view": "this is an EAGLE-1/2 draft ({what}), not the speculators format: {verdict}",
        "convert-source": (
            "not the speculators format: `specfmt convert` knows it ({what}); {verdict}"
        ),
    }


class TypeNotInVersion(_SchemaRule):
    """The type did not exist yet in the requested format version."""

    id = "S005"
    name = "type-not-in-version"
    since = "0.1.0"
    template = (
        "speculators_model_type {type!r} does not exist in format version {version} (it "
        "arrived in {since}); readers of {version} refuse it"
    )


class RequiredPropertyMissing(_SchemaRule):
    """A property that readers require is missing."""

    id = "S101"
    name = "required-property-missing"
    since = "0.1.0"
    template = "{where}: required key {key!r} is missing{more}"


class WrongType(_SchemaRule):
    """A value has the wrong JSON type."""

    id = "S102"
    name = "wrong-type"
    since = "0.1.0"
    template = "{where}: {value} is not of type {expected}{more}"


class ValueOutOfRange(_SchemaRule):
    """A value violates a bound: minimum, maximum, length or item count."""

    id = "S103"
    name = "value-out-of-range"
    since = "0.1.0"
    template = {
        "bound": "{where}: {value} must be {op} {limit}{more}",
        "minItems": "{where}: needs at least {limit} item{s}{more}",
        "maxItems": "{where}: allows at most {limit} item{s}{more}",
        "uniqueItems": "{where}: items must be unique{more}",
        "not-empty": "{where}: must not be empty{more}",
        "minLength": "{where}: must be at least {limit} characters{more}",
        "other": "{where}: {detail}{more}",
    }


class ValueNotAllowed(_SchemaRule):
    """A value is not one of the allowed constants."""

    id = "S104"
    name = "value-not-allowed"
    since = "0.1.0"
    template = {
        "const": "{where}: {value} is not allowed; expected {expected}{more}",
        "enum": "{where}: {value} is not one of {choices}{more}",
    }


class SchemaViolation(_SchemaRule):
    """The value matches none of the shapes the schema allows."""

    id = "S105"
    name = "schema-violation"
    since = "0.1.0"
    template = "{where}: {detail}{more}"


_BY_KEYWORD: dict[str, type[Rule]] = {
    "required": RequiredPropertyMissing,
    "type": WrongType,
    "const": ValueNotAllowed,
    "enum": ValueNotAllowed,
}
for _kw in (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "pattern",
):
    _BY_KEYWORD[_kw] = ValueOutOfRange


#: schema errors listed per config; the rest are counted in one more finding
MAX_SCHEMA_ERRORS = MAX_FINDINGS_PER_RULE
MAX_SCHEMA_COUNTED = 10_000  # past the listed ones, counted up to this many


def schema_findings(
    config: dict[str, Any], version: str, model_type: str, *, fast_path: bool = False
) -> Iterator[tuple[type[Rule], Hit]]:
    """Validate ``config`` against its type schema; yield (rule, hit) per error.

    jsonschema is the reference and produces every message. With ``fast_path`` (the
    default of every validation), a config that the compiled validator accepts
    (:func:`spec_format.facts.schemas.accepts`, jsonschema-rs) is valid without the jsonschema
    walk, and jsonschema is not even imported; tests/test_fast_path.py checks on every
    fixture and on generated mutations that the two never disagree in that direction. The
    findings are the same either way.
    """
    first, left_out = capped_errors(config, version, model_type, fast_path=fast_path)
    if not first:
        return
    from jsonschema.exceptions import best_match  # only to explain a config that failed

    for error in first:
        if error.context:
            # anyOf/oneOf: one S105 finding worded after the best-matching branch
            best = best_match(error.context)
            _, hit = _hit_for(best, version, model_type, alternatives=_branches(error))
            yield SchemaViolation, Hit(hit.message, pointer=pointer_from_parts(error.absolute_path))
        else:
            yield _hit_for(error, version, model_type)
    if left_out:
        more = f"at least {left_out:,}" if left_out == MAX_SCHEMA_COUNTED else f"{left_out:,}"
        yield (
            SchemaViolation,
            Hit(
                f"{more} more schema errors in this config not listed (the first "
                f"{MAX_SCHEMA_ERRORS} are); fix those and validate again",
                pointer="",
            ),
        )


def capped_errors(
    config: Any, version: str, model_type: str, *, fast_path: bool = True
) -> tuple[list[ValidationError], int]:
    """The first :data:`MAX_SCHEMA_ERRORS` schema errors of ``config`` in path order, and
    how many more there are (counted up to :data:`MAX_SCHEMA_COUNTED`): a 1.5M-item list of
    wrong values costs the same bounded walk in validate and migrate. With ``fast_path`` a
    config the compiled check accepts is not walked at all."""
    if fast_path and schemas.accepts(version, model_type, config):
        return [], 0
    if fast_path:  # walks only the parts the compiled check rejects (the same errors)
        errors = schemas.explained_errors(version, model_type, config)
    else:
        errors = schemas.validator(version, model_type).iter_errors(config)
    first = list(itertools.islice(errors, MAX_SCHEMA_ERRORS))
    if len(first) > 1:
        first.sort(key=_path_key)
    left_out = sum(1 for _ in itertools.islice(errors, MAX_SCHEMA_COUNTED))  # streamed
    return first, left_out


def _path_key(error: ValidationError) -> list[tuple[int, int, str]]:
    # array indexes numerically, keys by name; never compares an int with a str
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.absolute_path]


def _hit_for(
    error: ValidationError, version: str, model_type: str, alternatives: int = 0
) -> tuple[type[Rule], Hit]:
    rule = _BY_KEYWORD.get(str(error.validator), SchemaViolation)
    parts = tuple(str(p) for p in error.absolute_path)
    if error.validator == "required":
        missing = _missing_key(error)
        parts = (*parts, missing) if missing else parts
        variant, params = None, {"key": missing}
    else:
        variant, params = _value_params(error)
    where = pointer_from_parts(parts)
    more = ""
    if alternatives:
        more += f" (and {alternatives - 1} other allowed shape{'s' if alternatives > 2 else ''} do not match either)"
    hint = _hint(version, model_type, parts)
    if hint:
        more += f". {hint}"
    message = rule.render(variant, where=where or "the document", more=more, **params)
    return rule, Hit(message, pointer=where)


def _branches(error: ValidationError) -> int:
    value = error.validator_value
    return len(value) if isinstance(value, list) else len(error.context)


def _missing_key(error: ValidationError) -> str | None:
    # jsonschema's message is "'key' is a required property"
    msg = error.message
    if msg.startswith("'") and "' is a required property" in msg:
        return msg[1 : msg.index("' is a required property")]
    return None


_BOUND_OPS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def _value_params(error: ValidationError) -> tuple[str | None, dict[str, Any]]:
    """The message variant and parameters of the rule for one keyword error."""
    value = error.instance
    shown = _shown(value)
    kw = error.validator
    v = error.validator_value
    if kw == "type":
        return None, {"value": shown, "expected": " or ".join(v) if isinstance(v, list) else v}
    if kw == "const":
        return "const", {"value": shown, "expected": spelled(v)}
    if kw == "enum":
        return "enum", {"value": shown, "choices": ", ".join(map(spelled, v))}
    if kw in _BOUND_OPS:
        return "bound", {"value": shown, "op": _BOUND_OPS[kw], "limit": v}
    if kw in ("minItems", "maxItems"):
        return kw, {"limit": v, "s": "s" if v != 1 else ""}
    if kw == "uniqueItems":
        return "uniqueItems", {}
    if kw == "minLength":
        return ("not-empty", {}) if v == 1 else ("minLength", {"limit": v})
    detail = error.message if len(error.message) <= 300 else error.message[:300] + "..."
    if kw in _BY_KEYWORD:
        return "other", {"detail": detail}
    return None, {"detail": detail}


def _shown(value: Any, limit: int = 80) -> str:
    """A value for a message, never longer than about ``limit`` characters."""
    if isinstance(value, (dict, list)):
        return type(value).__name__
    if isinstance(value, str) and len(value) > limit:
        return f"{value[: limit // 2]!r}... ({len(value):,} characters)"
    text = spelled(value)
    return text if len(text) <= limit else f"{text[: limit // 2]}... ({len(text):,} characters)"


def _hint(version: str, model_type: str, parts: tuple[str, ...]) -> str:
    """First sentence of the schema's description of the offending property."""
    node = schemas.resolve(version, model_type, parts)
    desc = node.get("description", "") if node else ""
    if not desc:
        return ""
    first = desc.split(". ")[0].rstrip(".")
    return first + "."
