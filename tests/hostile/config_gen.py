"""Seeded generator of hostile config.json files (shared by the property tests and fuzz/).

A case starts from a real tiny config of a random type and damages it: hostile values at
random places (numbers past every limit as literal text, NaN/Infinity, lone surrogates,
wrong types, huge strings, deep nesting), duplicate keys, removed keys. The text is written
by a small serializer of its own so that literals Python's json would never write (``1e400``,
5,000-digit integers, ``"\\ud800"``) reach the reader as a user's file would. Building one
case with ``random.Random`` takes well under a millisecond.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from spec_format.testing.builder import tiny_config, tiny_verifier

TYPES = ["eagle3", "peagle", "dflash", "dflash2", "dspark", "xpress", "mtp"]


class Raw(str):
    """JSON text inserted as is (a number literal, NaN, an escape json.dumps would not write)."""


HOSTILE: list[Any] = [
    Raw("9" * 5000),
    Raw("-" + "1" * 4400),
    Raw("1e400"),
    Raw("1e999"),
    Raw("-1e999"),
    Raw("1e30"),
    Raw("1E+308"),
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw('"\\ud800"'),
    Raw('"\\udfff\\ud800"'),
    Raw('"ok\\ud83d\\ude00"'),  # a valid pair
    Raw("18446744073709551616"),
    Raw("-9223372036854775809"),
    Raw("0.0000000000000000000000000000001"),
    Raw("1" + "0" * 300),
    2**63 - 1,
    2**62,
    10**18,
    -1,
    0,
    1,
    True,
    False,
    None,
    "",
    "x",
    "64",
    [],
    {},
    [1, "x", None],
    [10**9, -5],
    {"a": {"b": []}},
    0.5,
    -0.0,
    3.5,
]
FIELDS = [
    "draft_vocab_size",
    "target_hidden_size",
    "block_size",
    "markov_rank",
    "xpress_rank",
    "conv_group_size",
    "mask_token_id",
    "num_nextn_predict_layers",
    "torch_dtype",
    "architectures",
    "speculators_version",
    "speculators_model_type",
    "eagle_aux_hidden_state_layer_ids",
    "aux_hidden_state_layer_ids",
    "norm_before_residual",
    "transformer_layer_config",
    "transformer_layer_config.hidden_size",
    "transformer_layer_config.vocab_size",
    "transformer_layer_config.num_hidden_layers",
    "transformer_layer_config.num_attention_heads",
    "transformer_layer_config.num_key_value_heads",
    "transformer_layer_config.head_dim",
    "transformer_layer_config.intermediate_size",
    "transformer_layer_config.rope_theta",
    "transformer_layer_config.rope_scaling",
    "transformer_layer_config.rope_scaling.factor",
    "transformer_layer_config.rope_scaling.rope_type",
    "transformer_layer_config.max_position_embeddings",
    "transformer_layer_config.model_type",
    "transformer_layer_config.rms_norm_eps",
    "speculators_config",
    "speculators_config.proposal_methods",
    "speculators_config.proposal_methods.0",
    "speculators_config.proposal_methods.0.speculative_tokens",
    "speculators_config.proposal_methods.0.accept_tolerance",
    "speculators_config.verifier",
    "speculators_config.verifier.architectures",
    "speculators_config.verifier.name_or_path",
    "speculators_config.default_proposal_method",
]
VERIFIER_FIELDS = [
    "hidden_size",
    "num_hidden_layers",
    "vocab_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "rope_theta",
    "rope_scaling",
    "architectures",
    "max_position_embeddings",
    "text_config",
    "text_config.hidden_size",
]


def dumps(value: Any) -> str:
    """JSON text with :class:`Raw` pieces inserted verbatim."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


def _pick(r: random.Random) -> Any:
    roll = r.random()
    if roll < 0.03:
        return "x" * r.choice([1000, 100_000])
    if roll < 0.05:
        depth = r.choice([10, 63, 70, 500])
        return Raw("[" * depth + "]" * depth)
    return copy.deepcopy(r.choice(HOSTILE))  # never share a list or dict between cases


def _set(doc: dict, dotted: str, value: Any) -> None:
    node: Any = doc
    parts = dotted.split(".")
    for part in parts[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(part, {})
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return
    last = parts[-1]
    if isinstance(node, dict):
        node[last] = value
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node[int(last)] = value


def _delete(doc: dict, dotted: str) -> None:
    node: Any = doc
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(parts[-1], None)


def config_text(seed: int) -> str:
    """A hostile config.json (text) for ``seed``."""
    r = random.Random(seed)
    doc: dict = tiny_config(r.choice(TYPES))
    for _ in range(r.randint(1, 4)):
        field = r.choice(FIELDS)
        if r.random() < 0.1:
            _delete(doc, field)
        else:
            _set(doc, field, _pick(r))
    text = dumps(doc)
    if r.random() < 0.08:  # a duplicated key at the top level
        key = r.choice(sorted(doc))
        text = text[:-1] + f", {json.dumps(key)}: {dumps(_pick(r))}" + "}"
    if r.random() < 0.03:  # many duplicates
        text = text[:-1] + ', "d": 1' * r.choice([100, 5000]) + "}"
    if r.random() < 0.02:
        text = r.choice(["", "{", "[]", '"x"', "\ufeff" + text, text[: len(text) // 2]])
    return text


def verifier_text(seed: int) -> str:
    """A (sometimes hostile) verifier config.json for ``seed``."""
    r = random.Random(seed ^ 0xBEEF)
    doc = tiny_verifier()
    for _ in range(r.randint(0, 3)):
        _set(doc, r.choice(VERIFIER_FIELDS), _pick(r))
    return dumps(doc)
