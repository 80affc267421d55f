"""Load the verifier (target model) config that ``--verifier PATH`` names.

``PATH`` is a ``config.json`` or a directory holding one. Multimodal configs keep the
language model's settings in a nested text config (``text_config``, ``llm_config``,
``language_config``, or ``thinker_config.text_config``); the V rules need that one, with the
top level filling in keys the text config lacks (``architectures``, sometimes
``vocab_size``, ``quantization_config``). The result is a plain dict, :attr:`Context.verifier`, plus
:class:`VerifierInfo` for the few values the rules compare.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spec_format.base.errors import InputError, UsageError
from spec_format.base.jsonload import (
    MAX_INT,
    json_whole,
    load_json,
    parse_json_bytes,
    spelled,
)
from spec_format.base.pathkind import DIRECTORY, MISSING, kind_of

if TYPE_CHECKING:  # the checkpoint reader loads when a remote verifier is read, not with validate
    from spec_format.parsers.checkpoint import Checkpoint
    from spec_format.parsers.storage import Storage

MAX_VERIFIER_CONFIG = 16 * 1024 * 1024
#: Where multimodal configs keep the language model, most specific first.
TEXT_CONFIG_KEYS = ("text_config", "llm_config", "language_config", "thinker_config.text_config")


@dataclass
class VerifierInfo:
    """The verifier's values the V rules compare, each with where it was read."""

    path: Path
    config: dict[str, Any]  # the text config, top level merged under it
    text_key: str | None = None  # "text_config" etc., None for a plain LM config
    sources: dict[str, str] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        return self.config.get(key)

    @property
    def hidden_size(self) -> int | None:
        return json_whole(self.config.get("hidden_size"))

    @property
    def num_hidden_layers(self) -> int | None:
        return json_whole(self.config.get("num_hidden_layers"))

    @property
    def vocab_size(self) -> int | None:
        return json_whole(self.config.get("vocab_size"))

    @property
    def architectures(self) -> list[str] | None:
        archs = self.config.get("architectures")
        return [a for a in archs if isinstance(a, str)] if isinstance(archs, list) else None

    def where(self, key: str) -> str:
        """``"text_config.hidden_size"`` or ``"hidden_size"``: for messages."""
        return self.sources.get(key, key)


INF = float("inf")
#: the sizes V001-V004 compare (read through :func:`json_whole`): a number there that is no whole
#: count is refused when the verifier is read, not skipped by every check that needs it (the
#: pairing reads its own keys, and words what it cannot use as findings)
SIZES = ("hidden_size", "num_hidden_layers", "vocab_size")


def _refuse_unusable_sizes(info: VerifierInfo) -> None:
    for key in SIZES:
        value = info.config.get(key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and json_whole(value) is None:
            # the reader stands in infinity for a number past what a double holds
            shown = "past what a double holds" if value in (INF, -INF) else spelled(value)[:40]
            raise UsageError(
                f"--verifier {info.path}: {info.where(key)} is {shown}, not a whole number up "
                f"to {MAX_INT:,}; fix the verifier's config.json"
            )


#: Other spellings of the same setting in some model families.
_ALIASES = {
    "hidden_size": ("n_embd", "d_model"),
    "num_hidden_layers": ("n_layer", "num_layers"),
    "num_attention_heads": ("n_head",),
}


def verifier_view(doc: Mapping[str, Any], path: Path | None = None) -> VerifierInfo:
    """Build the merged view from a parsed verifier config."""
    text_key = None
    text: Mapping[str, Any] | None = None
    for key in TEXT_CONFIG_KEYS:
        node: Any = doc
        for part in key.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping) and node:
            text_key, text = key, node
            break
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for k, v in doc.items():
        # objects too: rope_scaling, rope_parameters and quantization_config are what the
        # pairing depends on (spec_format.facts.pairing reads them)
        merged[k] = v
        sources[k] = k
    if text is not None:
        for k, v in text.items():
            # the top level names the checkpoint's own architectures (what speculators
            # records as verifier.architectures); the text config's are its sub-model's
            if k == "architectures" and merged.get(k):
                continue
            if v is not None or k not in merged:
                merged[k] = v
                sources[k] = f"{text_key}.{k}"
    for canonical, aliases in _ALIASES.items():
        if merged.get(canonical) is None:
            for alias in aliases:
                if merged.get(alias) is not None:
                    merged[canonical] = merged[alias]
                    sources[canonical] = sources.get(alias, alias)
                    break
    return VerifierInfo(
        path=path or Path("config.json"), config=merged, text_key=text_key, sources=sources
    )


def load_verifier(path: str | os.PathLike[str]) -> VerifierInfo:
    """Read ``--verifier PATH`` (or ``hf://ORG/NAME[@REV]``: its ``config.json`` alone); a
    path that cannot be used is a :class:`UsageError`, a remote file that cannot be fetched
    an :class:`~spec_format.base.errors.InputError`."""
    if os.fspath(path).startswith("hf://"):
        from spec_format.parsers.remote import HubStorage

        storage = HubStorage.from_url(os.fspath(path))
        try:
            return _remote_config(storage, os.fspath(path))
        finally:
            storage.close()
    p = Path(path)
    if kind_of(p) == DIRECTORY:
        p = p / "config.json"
    if kind_of(p) == MISSING:
        raise UsageError(
            f"--verifier {path}: no config.json there; pass the verifier's config.json or its directory"
        )
    # the same strict, bounded reader as every other JSON file (guarded numbers)
    return _verifier_of(load_json(p, max_bytes=MAX_VERIFIER_CONFIG), p)


def open_remote_verifier(url: str) -> tuple[VerifierInfo, Checkpoint]:
    """``hf://ORG/NAME[@REV]`` with its safetensors headers (what ``inspect`` counts): the
    verifier view of its ``config.json`` and the open checkpoint, which the caller closes.
    Fails as :func:`load_verifier` does, in the same words."""
    from spec_format.parsers.checkpoint import load_checkpoint

    try:
        ckpt = load_checkpoint(url)
    except InputError as exc:  # the repository cannot be listed
        raise InputError(f"--verifier {exc}") from None
    try:
        return _remote_config(ckpt.storage, url), ckpt
    except BaseException:
        ckpt.close()
        raise


def _remote_config(storage: Storage, url: str) -> VerifierInfo:
    """The verifier view of the ``config.json`` at the top of the repository ``url``."""
    try:
        data = storage.read_small("config.json", MAX_VERIFIER_CONFIG)
    except InputError as exc:
        raise InputError(f"--verifier {exc}") from None
    if data is None:
        raise UsageError(
            f"--verifier {url}: the repository has no config.json at its top level; pass the "
            "verifier's repository (or a local config.json)"
        )
    return parse_verifier(data, storage.display("config.json"))


def parse_verifier(data: bytes, path: str | os.PathLike[str]) -> VerifierInfo:
    """The verifier view of the bytes of a ``config.json`` read elsewhere (``hf://``);
    ``path`` names it in messages. A config that cannot be used is a :class:`UsageError`."""
    if len(data) > MAX_VERIFIER_CONFIG:
        raise UsageError(f"--verifier {path}: {len(data):,} bytes is too large for a config.json")
    name = _name(path)
    return _verifier_of(parse_json_bytes(data, name), name)


def _verifier_of(loaded, path: str | os.PathLike[str]) -> VerifierInfo:
    fatal = next((pr for pr in loaded.problems if pr.fatal), None)
    if fatal is not None or not loaded.ok:
        detail = fatal.message.removeprefix(f"{path}: ") if fatal else "could not be read"
        if fatal is not None and fatal.kind == "not-object":
            raise UsageError(f"--verifier {path}: the file is not a JSON object")
        raise UsageError(f"--verifier {path}: not a readable JSON config ({detail})")
    doc = loaded.data
    if "speculators_model_type" in doc:
        raise UsageError(
            f"--verifier {path}: this is a speculators draft config; pass the target model's config"
        )
    info = verifier_view(doc, _name(path))
    _refuse_unusable_sizes(info)
    return info


def _name(path: str | os.PathLike[str]) -> Any:
    """``path`` for messages: pathlib would turn ``hf://ORG/NAME`` into ``hf:/ORG/NAME``."""
    text = os.fspath(path)
    if text.startswith("hf://"):
        from spec_format.parsers.checkpoint import RemoteName

        return RemoteName(text)
    return Path(path)
