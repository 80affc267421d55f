"""Where each vLLM release reads a base model's number of MTP layers (``n_predict``).

vLLM serves a model's own MTP layers (``--speculative-config '{"method": "mtp"}'``) by
rewriting the model's config in ``SpeculativeConfig.hf_config_override``: per model_type it
sets the draft's ``model_type`` and ``architectures`` and reads ``n_predict`` from one key.
Importing the config module needs most of vLLM's dependency tree, so the function is taken
from the release's source with ``ast`` and executed, unmodified, on stand-in configs: one
holding a distinct number at every MTP-count key at the top level, one holding them only
under ``text_config`` (the layout of multimodal checkpoints such as Qwen3.5). The number the
release ends up with names the key it read; ``None`` means it read none there.
"""

from __future__ import annotations

import ast
import logging
from pathlib import Path
from typing import Any

from tests.readers.aux_archs import CONFIG_MODULES

#: the keys a base model's config states its MTP layer count in (the sentinels' keys)
KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules")
FUNCTION = "hf_config_override"
#: what some branches read besides the count (a DeepSeek-V3-sized model)
COMMON = {"num_hidden_layers": 61, "hidden_size": 7168, "vocab_size": 129280}


class _Config:
    """A stand-in for a transformers config: attributes, ``update``, ``get_text_config``."""

    def __init__(self, values: dict[str, Any], text: _Config | None = None):
        self.__dict__.update(values)
        if text is not None:
            self.text_config = text

    def update(self, values: dict[str, Any]) -> None:
        self.__dict__.update(values)

    def get_text_config(self, *args, **kwargs) -> _Config:
        return self.__dict__.get("text_config", self)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _function(src: Path) -> ast.FunctionDef | None:
    for rel in CONFIG_MODULES:
        path = src / "vllm" / rel
        if not path.is_file():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name == FUNCTION:
                node.decorator_list = []
                node.returns = None
                for arg in node.args.args:
                    arg.annotation = None
                return node
    return None


def _model_types(function: ast.FunctionDef) -> list[str]:
    """The model_types the function compares ``hf_config.model_type`` with (before any
    rewrite: the MTP draft types it rewrites to are compared too, and answered the same)."""
    found: set[str] = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Compare):
            continue
        if not (isinstance(node.left, ast.Attribute) and node.left.attr == "model_type"):
            continue
        for comparator in node.comparators:
            for c in ast.walk(comparator):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    found.add(c.value)
    return sorted(found)


def _sentinels(base: int) -> dict[str, int]:
    return {key: base + i for i, key in enumerate(KEYS)}


def _read(function, model_type: str, nested: bool) -> str | None | bool:
    """The key path ``n_predict`` came from; None: none; False: the branch cannot run here."""
    top = _sentinels(1000)
    inner = _sentinels(2000)
    common = {"model_type": model_type, "architectures": ["BaseForCausalLM"]} | COMMON
    text = _Config(common | inner) if nested else None
    config = _Config(common | ({} if nested else top), text)
    try:
        out = function(config)
    except Exception:  # a branch importing a model module, or one needing real values
        return False
    n_predict = getattr(out if out is not None else config, "n_predict", None)
    for key, value in (inner if nested else top).items():
        if n_predict == value:
            return f"text_config.{key}" if nested else key
    return None


def n_predict_reads(src: Path) -> dict[str, dict[str, str | None]] | None:
    """model_type -> {"top": path or None, "text_config": path or None} (a layout whose run
    could not execute is left out); None when the release has no such function."""
    node = _function(src)
    if node is None:
        return None
    scope: dict[str, Any] = {
        "get_hf_text_config": lambda c: c.get_text_config(),
        "logger": logging.getLogger("vllm-source"),
        "PretrainedConfig": _Config,
    }
    module = ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[]))
    exec(compile(module, f"<{FUNCTION}>", "exec"), scope)  # noqa: S102
    function = scope[FUNCTION]
    out: dict[str, dict[str, str | None]] = {}
    for model_type in _model_types(node):
        answers = {}
        for layout, nested in (("top", False), ("text_config", True)):
            read = _read(function, model_type, nested)
            if read is not False:
                answers[layout] = read
        if answers:
            out[model_type] = answers
    return out
