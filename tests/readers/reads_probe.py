"""Runs inside one vLLM reader environment (imported by weights_probe.py); never imported by
specfmt. Records what a release reads while it builds and loads a draft, without changing it.

``recording(draft, verifier)`` is a context manager; inside it

* the raw ``config.json`` dict of a speculators draft (``PretrainedConfig.get_config_dict``'s
  answer, which every reader of the release asks for) is a ``dict`` subclass that notes each
  key looked up (``[]``, ``get``, ``in``, ``pop``, ``setdefault``) under its path:
  ``draft_vocab_size``, ``speculators_config.verifier.name_or_path``,
  ``transformer_layer_config.head_dim``, ...; copying or unpacking it (``**d``, ``dict(d)``,
  ``json.dumps``) reads no particular key and notes nothing;
* ``PretrainedConfig.__getattribute__`` notes every attribute vLLM's own code (a caller in
  the ``vllm`` package) looks up on a config object, present or not (``getattr(config, "x", None)`` of an absent one is a read too), less
  private names (``_...``) and what the class itself defines (methods, properties, class
  constants): the fields of the object. At the end each object is attributed by its
  ``_name_or_path``: the draft's folder (its attributes are the ``transformer_layer_config``
  keys and what the speculators conversion sets from the top level), the verifier's folder,
  or neither (sub-configs; not reported).

Both hooks are installed on entry and the original functions restored on exit, so a request
without recording runs the release's code exactly as before.
"""

import contextlib
import os
import sys

from transformers import PretrainedConfig

_ORIGINAL_GETATTRIBUTE = PretrainedConfig.__getattribute__
_ORIGINAL_GET_CONFIG_DICT = PretrainedConfig.__dict__["get_config_dict"]


class _Reads:
    def __init__(self):
        self.keys: set[str] = set()
        self.objects: dict[int, tuple[object, set[str]]] = {}  # id -> (object, names)


_ACTIVE: list[_Reads] = []
_VLLM = f"{os.sep}vllm{os.sep}"


class RecordingDict(dict):
    """A dict that notes the keys looked up in it (under ``_path``) in the active recording."""

    _path = ""

    def _note(self, key) -> None:
        if _ACTIVE and isinstance(key, str):
            _ACTIVE[-1].keys.add(self._path + key)

    def __getitem__(self, key):
        self._note(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self._note(key)
        return dict.get(self, key, default)

    def __contains__(self, key):
        self._note(key)
        return dict.__contains__(self, key)

    def pop(self, key, *default):
        self._note(key)
        return dict.pop(self, key, *default)

    def setdefault(self, key, default=None):
        self._note(key)
        return dict.setdefault(self, key, default)


def _wrap(value, path: str):
    if isinstance(value, dict):
        out = RecordingDict()
        out._path = path
        for k, v in value.items():
            dict.__setitem__(out, k, _wrap(v, f"{path}{k}."))
        return out
    if isinstance(value, list):
        # an item of a list is read under the list's path ("proposal_methods.speculative_tokens")
        return [_wrap(v, path) for v in value]
    return value


def _get_config_dict(cls, *args, **kwargs):
    config, rest = _ORIGINAL_GET_CONFIG_DICT.__func__(cls, *args, **kwargs)
    if _ACTIVE and isinstance(config, dict) and "speculators_config" in config:
        config = _wrap(config, "")
    return config, rest


def _by_vllm() -> bool:
    """The lookup is vLLM's own code's (not transformers' handling of its own objects:
    ``to_dict``, ``__repr__``, the generation defaults it walks)."""
    return _VLLM in sys._getframe(2).f_code.co_filename


def _getattribute(self, name):
    try:
        value = _ORIGINAL_GETATTRIBUTE(self, name)
    except AttributeError:
        if _ACTIVE and not name.startswith("_") and _by_vllm():
            _note(self, name)
        raise
    if _ACTIVE and not name.startswith("_") and _by_vllm():
        own = object.__getattribute__(self, "__dict__")
        if name in own or not hasattr(type(self), name):
            _note(self, name)
    return value


def _note(obj, name: str) -> None:
    objects = _ACTIVE[-1].objects
    entry = objects.get(id(obj))
    if entry is None:
        entry = objects[id(obj)] = (obj, set())  # the object is kept: ids stay distinct
    entry[1].add(name)


def _side(obj, draft: str, verifier: str) -> str | None:
    """``draft``, ``verifier`` or ``None`` (a sub-config): the speculators conversion's
    object (``SpeculatorsConfig``; it sets no ``_name_or_path``) and the configs vLLM wraps
    the draft's in (``EAGLEConfig``, built from its values) are the draft's."""
    from vllm.transformers_utils.configs.speculators.base import SpeculatorsConfig

    where = str(object.__getattribute__(obj, "__dict__").get("_name_or_path", "")).rstrip("/")
    if where == verifier:
        return "verifier"
    if where == draft or isinstance(obj, SpeculatorsConfig):
        return "draft"
    if type(obj).__name__ in _DRAFT_WRAPPERS:
        return "draft"
    return None


#: vLLM's config classes that wrap a draft's config (their attributes are the draft's fields)
_DRAFT_WRAPPERS = ("EAGLEConfig",)


@contextlib.contextmanager
def recording(draft: str, verifier: str):
    """Yields a dict filled on exit: ``draft`` (raw keys read), ``draft_attributes``,
    ``verifier_attributes`` (sorted names)."""
    reads, result = _Reads(), {}
    _ACTIVE.append(reads)
    PretrainedConfig.__getattribute__ = _getattribute
    PretrainedConfig.get_config_dict = classmethod(_get_config_dict)
    try:
        yield result
    finally:
        PretrainedConfig.__getattribute__ = _ORIGINAL_GETATTRIBUTE
        PretrainedConfig.get_config_dict = _ORIGINAL_GET_CONFIG_DICT
        _ACTIVE.pop()
        by_path: dict[str, set[str]] = {"draft": set(), "verifier": set()}
        for obj, names in reads.objects.values():
            side = _side(obj, draft.rstrip("/"), verifier.rstrip("/"))
            if side:
                by_path[side] |= names
        result.update(
            draft=sorted(reads.keys),
            draft_attributes=sorted(by_path["draft"]),
            verifier_attributes=sorted(by_path["verifier"]),
        )


def interface(verifier: str) -> dict[str, bool | None]:
    """The verifier's architectures -> whether the class the release's registry loads for
    each implements ``SupportsEagle3`` (``supports_eagle3``, what the model runner asks before
    it turns on aux hidden-state outputs), ``None`` when the class does not import here."""
    import json
    from pathlib import Path

    from vllm.model_executor.models.interfaces import supports_eagle3
    from vllm.model_executor.models.registry import ModelRegistry

    config = json.loads((Path(verifier) / "config.json").read_text(encoding="utf-8"))
    out: dict[str, bool | None] = {}
    for arch in config.get("architectures") or []:
        try:
            cls = ModelRegistry._try_load_model_cls(arch)
        except Exception:
            cls = None
        out[arch] = None if cls is None else bool(supports_eagle3(cls))
    return out
