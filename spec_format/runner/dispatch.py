"""Which format version and which type a config is checked as: the version from
``--format-version``, ``speculators_version`` or the keys, the type from
``speculators_model_type``, or the finding that says why it has none we can check (a retired
type, one of another version, a misspelling, another project's draft config)."""

from __future__ import annotations

import difflib
import re
from typing import Any

from spec_format.base.jsonload import json_strings
from spec_format.base.report import Finding
from spec_format.facts import catalog, versions
from spec_format.rules import base_models
from spec_format.rules import schema as schema_rules
from spec_format.runner.validate_options import ValidateOptions


def format_version(
    config: dict[str, Any], options: ValidateOptions
) -> tuple[str, str, versions.Detection | None]:
    """The format version to validate against and where it came from: ``requested``
    (``--format-version``), ``declared`` (``speculators_version``, when the keys agree) or
    ``inferred`` (from the keys; see :func:`spec_format.facts.versions.detect`)."""
    if options.format_version:  # a usage error when unknown
        line, _ = versions.option_version(options.format_version)
        return line, "requested", None
    detection = versions.detect(config)
    return detection.line, detection.source, detection


def _meant_type(config: dict[str, Any], model_type: str, types: tuple[str, ...]) -> list[str]:
    """The type of ``types`` a config most likely means: its speculators_config.algorithm,
    else a type the name begins (``eagle`` -> ``eagle3``), else the closest spelling."""
    spec = config.get("speculators_config")
    algorithm = spec.get("algorithm") if isinstance(spec, dict) else None
    if isinstance(algorithm, str) and algorithm in types:
        return [algorithm]
    longer = [t for t in types if t.startswith(model_type)]
    return longer[:1] or difflib.get_close_matches(model_type, types, n=1)


def dispatch(
    config: dict[str, Any], version: str, file: str, options: ValidateOptions
) -> str | Finding:
    """The config's type, or the finding that explains why it has none we can check."""
    profile = options.profile
    model_type = config.get("speculators_model_type")
    pointer = "/speculators_model_type"
    if model_type is None:
        known = ", ".join(catalog.known_types())
        if "speculators_config" in config:
            return schema_rules.MissingModelType.emit(
                file,
                profile=profile,
                pointer=pointer,
                variant="with-speculators-config",
                hint=_type_hint(config),
                known=known,
            )
        third_party = _third_party(config)
        if third_party:
            return schema_rules.ThirdPartyConfig.emit(
                file,
                profile=profile,
                pointer="",
                variant=third_party[0],
                ckpt=_folder_of(file),
                **third_party[1],
            )
        base_model = base_models.dispatch_finding(config, file, profile)
        if base_model is not None:
            return base_model
        return schema_rules.MissingModelType.emit(
            file, profile=profile, pointer="", variant="absent", known=known
        )
    if not isinstance(model_type, str):
        return schema_rules.MissingModelType.emit(
            file,
            profile=profile,
            pointer=pointer,
            variant="not-a-string",
            found=type(model_type).__name__,
        )
    entry = catalog.version_entry(version)
    if model_type in entry.types:
        return model_type
    retired = catalog.retired_types()
    if model_type in retired:
        # a retired name in a version that never had it is most likely a current type mistyped
        close = _meant_type(config, model_type, entry.types)
        return schema_rules.RetiredModelType.emit(
            file,
            profile=profile,
            pointer=pointer,
            variant="dispatch",
            type=model_type,
            retired=retired[model_type],
            hint=f" (did you mean {close[0]!r}, a type of format {version}?)" if close else "",
        )
    if model_type in catalog.known_types():
        since = next(v for v, e in catalog.versions().items() if model_type in e.types)
        return schema_rules.TypeNotInVersion.emit(
            file, profile=profile, pointer=pointer, type=model_type, version=version, since=since
        )
    names = list(dict.fromkeys([*catalog.known_types(), *retired]))  # known_types has retired
    # difflib indexes every character of its argument: only names of a plausible length
    close = difflib.get_close_matches(model_type, names, n=1) if len(model_type) <= 64 else []
    folded = [n for n in entry.types if n == model_type.lower()]  # EAGLE3 -> eagle3
    close = folded or close
    return schema_rules.UnknownModelType.emit(
        file,
        profile=profile,
        pointer=pointer,
        type=model_type,
        hint=f" (did you mean {close[0]!r}?)" if close else "",
        known=", ".join(n for n in names if n not in retired)
        + (f" (retired: {', '.join(retired)})" if retired else ""),
    )


def _folder_of(file: str) -> str:
    """The checkpoint as a command names it: its config file (convert reads the folder
    that holds it); CKPT for standard input or a remote config."""
    import shlex  # only where a finding quotes a command

    if file in ("-", "<stdin>") or file.startswith("hf://"):
        return "CKPT"
    return shlex.quote(file)


def _type_hint(config: dict[str, Any]) -> str:
    """Suggest a type from speculators_config.algorithm or the architectures list."""
    spec = config.get("speculators_config")
    algorithm = spec.get("algorithm") if isinstance(spec, dict) else None
    if isinstance(algorithm, str) and algorithm in catalog.known_types():
        return f": speculators_config.algorithm suggests {algorithm!r}"
    return ""


def third_party_kind(config: dict[str, Any]) -> str | None:
    """The other project whose draft config this is (an S004 variant: "safeailab-eagle3",
    "z-lab-dflash", ...), or None; ``specfmt convert``'s source kinds detect with it."""
    found = _third_party(config)
    return found[0] if found else None


#: keys only EAGLE-3 exports write (a draft vocabulary, the verifier layers it reads)
_EAGLE3_KEYS = ("eagle_config", "draft_vocab_size", "eagle_aux_hidden_state_layer_ids")
_EAGLE3_ARCH = re.compile(r"eagle-?3", re.IGNORECASE)


def _eagle3_family(config: dict[str, Any], archs: list[str]) -> bool:
    """An EAGLE-3 export of another project: an architecture that says EAGLE-3 in any
    spelling (``LlamaForCausalLMEagle3``, ``Eagle3LlamaForCausalLM``,
    ``EAGLE3Qwen3ForCausalLM``), or an EAGLE architecture with the keys only EAGLE-3 writes
    (an EAGLE-1/2 draft has no draft vocabulary and taps no aux layers)."""
    if "eagle_config" in config or any(_EAGLE3_ARCH.search(a) for a in archs):
        return True
    return any("eagle" in a.lower() for a in archs) and any(k in config for k in _EAGLE3_KEYS)


def _third_party(config: dict[str, Any]) -> tuple[str, dict[str, str]] | None:
    """Recognise draft configs of other projects: (S004 message variant, its parameters)."""
    archs = json_strings(config.get("architectures"))
    if "dflash_config" in config or any("DFlash" in a for a in archs):
        return "z-lab-dflash", {}
    if _eagle3_family(config, archs):
        return "safeailab-eagle3", {"what": ", ".join(archs) or "eagle_config"}
    if {"speculators_algorithm", "draft_model"} <= config.keys():
        return "pre-0.1", {}
    if any("Eagle" in a or "EAGLE" in a for a in archs):
        return "eagle1", {"what": ", ".join(archs)}
    return None
