"""S006: a base model's checkpoint where a draft was expected, said for what it is.

``validate`` given a base (target) model says which one it is instead of "not a speculators
config": a model with native MTP layers (Qwen3-Next and Qwen3.5 keep them as ``mtp.*``,
DeepSeek and GLM as extra ``model.layers.N``, MiniMax as MTP modules), and whether
``specfmt convert`` can extract them (a base model without MTP layers stays S001). With the weights at hand (the config's dispatch found no draft type),
the MTP layers the config declares are looked for among the tensors: a checkpoint that
declares them but holds none (a quantized export that dropped them) is reported, and so are
an MTP layer kept in BF16 that the model's ``quantization_config`` does not exclude (an
engine builds it quantized and loads none of its weights) and more MTP layers than the
format carries, which convert refuses.

The engine emits both (the config half at type dispatch, the weights half once the
checkpoint's headers are read); the wording is here, the facts come from the catalog's
``mtp`` record (the layer families speculators builds MTP layers for).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from spec_format.base.jsonload import json_strings
from spec_format.base.report import Finding, Severity
from spec_format.facts import catalog, reads
from spec_format.rules.base import Layer, Rule, Stability

#: where a base model's config declares its MTP layers: (key, tensor layout)
#: ``mtp``: ``mtp.*`` tensors (Qwen3-Next, Qwen3.5), which ``specfmt convert`` extracts;
#: ``layers``: ``model.layers.N.*`` past the decoder layers (DeepSeek, GLM, MiMo);
#: ``modules``: MiniMax's MTP modules (``use_mtp``), tensors named ``*mtp*``
MTP_KEYS = (
    ("mtp_num_hidden_layers", "mtp"),
    ("num_nextn_predict_layers", "layers"),
    ("num_mtp_modules", "modules"),
)
_MTP_LAYER = re.compile(r"^mtp\.layers\.(\d+)\.")
_BASE_ARCH = re.compile(r"(ForCausalLM|ForConditionalGeneration)$")


class BaseModelCheckpoint(Rule):
    """The input is a base model's checkpoint, not a speculators draft."""

    id = "S006"
    name = "base-model-checkpoint"
    layer = Layer.SCHEMA
    severity = Severity.ERROR
    since = "0.1.0"
    status = Stability.PREVIEW
    engine_emitted = True
    references = ("vllm-project/vllm#35548", "MiniMax-AI/MiniMax-M2.5#8", "vllm-project/vllm#37667")
    template = {
        "native-mtp": (
            "this is the config of a base model ({arch}) with {count} native MTP layer(s) "
            "({key}: {count}), not a speculators draft; {convert}"
        ),
        "mtp-tensors-missing": (
            "the config declares {count} MTP layer(s) ({key}: {count}) but the checkpoint "
            "holds none of their tensors (no {expected}): served with MTP, an engine builds "
            "those layers from uninitialised memory (acceptance 0), and `specfmt convert` has "
            "nothing to extract; use an export that keeps the MTP layers"
        ),
        "mtp-layer-unquantized": (
            "the MTP layer's weights are unquantized ({held}) while quantization_config "
            "({method}) quantizes every layer it does not exclude, and {excluded}: an engine "
            "that builds the MTP layer with the model's quantization config loads none of "
            'them (acceptance 0); add the MTP layer to {field} ("{pattern}") or serve it '
            "with a release that builds an unquantized MTP layer without quantization"
        ),
        "mtp-count-unread": (
            "{engine} reads the MTP layer count of a {model_type!r} model from {where}, and "
            "this config states it only as {key}: {count}: served with method mtp, that "
            "release resolves n_predict to None instead of {count}, so what it derives from "
            "the count (the check that num_speculative_tokens is a multiple of it) is silently "
            "skipped; {fix}"
        ),
        "mtp-layers-extra": (
            "the checkpoint holds {count} MTP layers (mtp.layers.0 to mtp.layers.{last}); "
            "`specfmt convert` refuses it: the speculators mtp format carries one MTP layer "
            "(num_nextn_predict_layers must be 1 for every speculators release)"
        ),
    }


def _text(config: Mapping[str, Any]) -> Mapping[str, Any]:
    text = config.get("text_config")
    return text if isinstance(text, Mapping) else config


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def mtp_declaration(config: Mapping[str, Any]) -> tuple[str, int, str] | None:
    """(the key, as ``text_config.KEY`` when nested, the number of MTP layers it declares,
    the tensor layout) of a base model's config, or None when it declares none."""
    if "speculators_model_type" in config or "speculators_config" in config:
        return None
    for where, doc in (("", config), ("text_config.", _text(config))):
        for key, layout in MTP_KEYS:
            count = _count(doc.get(key))
            if count is None or (layout == "modules" and doc.get("use_mtp") is False):
                continue
            return where + key, count, layout
    return None


def _architecture(config: Mapping[str, Any]) -> str | None:
    names = json_strings(config.get("architectures"))
    return next((a for a in names if _BASE_ARCH.search(a)), None)


def dispatch_finding(config: Mapping[str, Any], file: str, profile) -> Finding | None:
    """The S006 finding for a config without ``speculators_model_type`` that is a base
    model's with native MTP layers (None: it declares none)."""
    declared = mtp_declaration(config)
    if declared is not None:
        arch = _architecture(config)
        key, count, layout = declared
        families = catalog.record("mtp").layer_families
        family = _text(config).get("model_type")
        if layout == "mtp" and family in families and count > 1:
            convert = (
                f"`specfmt convert` refuses it: the speculators mtp format carries one MTP "
                f"layer, this model declares {count}"
            )
        elif layout == "mtp" and family in families:
            import shlex

            ckpt = "CKPT" if file in ("-", "<stdin>") else shlex.quote(file)
            convert = (
                f"`specfmt convert {ckpt} -o OUT --verifier {ckpt}` extracts its mtp.* layer "
                "into a speculators mtp draft (the checkpoint's weights must hold the mtp.* "
                "tensors)"
            )
        else:
            convert = (
                f"`specfmt convert` extracts MTP layers stored as mtp.* of {', '.join(families)} "
                f"models only (this is {family!r}); engines serve a model's own MTP layers with "
                "--speculative-config method mtp"
            )
        return BaseModelCheckpoint.emit(
            file,
            profile=profile,
            pointer="",
            variant="native-mtp",
            arch=arch or "no architectures",
            count=count,
            key=key,
            convert=convert,
        )
    return None


def engine_findings(config: Mapping[str, Any], engines: tuple, file: str, profile) -> list[Finding]:
    """S006 for a base model whose MTP layer count a named (or assumed) vLLM release does
    not read where this config states it (``schema/readers/reads/``, ``mtp_n_predict``)."""
    declared = mtp_declaration(config)
    model_type = config.get("model_type")
    if declared is None or not isinstance(model_type, str):
        return []
    key, count, _ = declared
    layout = "text_config" if key.startswith("text_config.") else "top"
    out = []
    for engine in engines:
        if engine.name != "vllm":
            continue
        known, path = reads.mtp_count_read(engine.representative, model_type, layout)
        if not known or path is not None:
            continue
        _, top = reads.mtp_count_read(engine.representative, model_type, "top")
        first = reads.first_reading_mtp_count(model_type, layout)
        fixes = [f"serve it with {first} or later" if first else ""]
        if top is not None:
            fixes.append(f"add {top}: {count} at the top level of config.json")
        out.append(
            BaseModelCheckpoint.emit(
                file,
                profile=profile,
                pointer="/" + key.replace(".", "/"),
                variant="mtp-count-unread",
                engine=engine.id,
                model_type=model_type,
                where=f"the top-level {top}" if top else "no key of a config laid out so",
                key=key,
                count=count,
                fix=", or ".join(f for f in fixes if f) or "no covered release reads it",
            )
        )
    return out


def weight_findings(
    config: Mapping[str, Any], tensor_names: Mapping[str, Any], file: str, profile
) -> list[Finding]:
    """What the tensors (name -> header entry) of a base model's checkpoint say about the
    MTP layers its config declares: none of them present, stored unquantized beside a
    quantization that does not exclude them, or more than the format carries."""
    declared = mtp_declaration(config)
    if declared is None:
        return []
    key, count, layout = declared
    names = list(tensor_names)
    if layout == "mtp":
        held = [n for n in names if n.startswith("mtp.")]
        expected = "mtp.* tensor"
    elif layout == "layers":
        first = _count(_text(config).get("num_hidden_layers"))
        if first is None:
            return []
        prefixes = tuple(f"model.layers.{first + i}." for i in range(count))
        held = [n for n in names if any(p in n for p in prefixes)]
        expected = " or ".join(p + "*" for p in prefixes) + " tensor"
    else:
        held = [n for n in names if "mtp" in n.lower()]
        expected = "tensor with mtp in its name"
    if not held:
        return [
            BaseModelCheckpoint.emit(
                file,
                profile=profile,
                variant="mtp-tensors-missing",
                count=count,
                key=key,
                expected=expected,
            )
        ]
    unquantized = _unquantized(config, tensor_names, held, file, profile)
    if unquantized is not None:
        return [unquantized]
    layers = sorted({int(m.group(1)) for n in held if (m := _MTP_LAYER.match(n))})
    if layout == "mtp" and count == 1 and len(layers) > 1:  # more than the config says
        return [
            BaseModelCheckpoint.emit(
                file,
                profile=profile,
                variant="mtp-layers-extra",
                count=len(layers),
                last=layers[-1],
            )
        ]
    return []


#: the keys of a quantization_config that list modules left unquantized, by method
_EXCLUDE_KEYS = ("exclude", "ignore", "ignored_layers", "modules_to_not_convert", "skip_modules")
#: float dtypes of an unquantized weight (a quantized one is an integer, FP8 or FP4 type, or
#: comes with a scale)
_FLOAT = {"BF16", "F16", "F32"}
#: a group holding a quantifier or an alternation, itself repeated ((a+)+, (a|aa)*): the
#: shape whose backtracking grows exponentially, in a pattern the config's author wrote
_NESTED = re.compile(r"\([^)]*[*+}|][^)]*\)\s*[*+{]")


def _excludes(patterns: list[str], name: str) -> bool:
    """Whether an entry of an exclusion list names the tensor ``name``: a module prefix, a
    glob, or ``re:REGEX`` (compressed-tensors, quark)."""
    import fnmatch

    module = name.removesuffix(".weight")
    for entry in patterns:
        if entry.startswith("re:"):
            pattern = entry[3:]
            if len(pattern) > 500 or _NESTED.search(pattern):
                return True  # never run (its backtracking may not end): taken to exclude it
            try:
                if re.search(pattern, module):
                    return True
            except re.error:
                continue
        elif module == entry or module.startswith(entry + ".") or fnmatch.fnmatch(module, entry):
            return True
    return False


def _unquantized(
    config: Mapping[str, Any], tensors: Mapping[str, Any], held: list[str], file: str, profile
) -> Finding | None:
    """S006 for a quantized base model whose MTP layer is stored unquantized (float linear
    weights, no scales) but is not in the quantization config's exclusion list."""
    quant = _text(config).get("quantization_config") or config.get("quantization_config")
    if not isinstance(quant, Mapping) or not isinstance(quant.get("quant_method"), str):
        return None
    linear = [
        n
        for n in held
        if n.endswith(".weight") and len(getattr(tensors[n], "shape", ()) or ()) == 2
    ]
    if not linear or any("scale" in n or "qweight" in n for n in held):
        return None
    if any(getattr(tensors[n], "dtype", None) not in _FLOAT for n in linear):
        return None
    field = next((k for k in _EXCLUDE_KEYS if isinstance(quant.get(k), list)), "exclude")
    listed = [e for e in quant.get(field) or [] if isinstance(e, str)]
    if all(_excludes(listed, n) for n in linear):
        return None
    prefix = linear[0].split(".")
    layer = ".".join(prefix[:3]) if prefix[:2] == ["model", "layers"] else prefix[0]
    shown = ", ".join(sorted({str(getattr(tensors[n], "dtype", "")) for n in linear}))
    return BaseModelCheckpoint.emit(
        file,
        profile=profile,
        pointer="/quantization_config",
        variant="mtp-layer-unquantized",
        held=f"{len(linear)} {shown} linear weight(s) under {layer}.*",
        method=quant["quant_method"],
        excluded=(
            f"its {field} ({', '.join(listed)}) does not name {layer}"
            if listed
            else f"it excludes nothing ({field} absent)"
        ),
        field=f"quantization_config.{field}",
        pattern=f"{layer}.*",
    )
