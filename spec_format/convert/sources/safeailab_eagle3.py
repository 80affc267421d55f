"""SafeAILab/EAGLE-3 style checkpoints (``LlamaForCausalLMEagle3``, ``midlayer.*`` tensors).

The reference for every mapping and default is speculators' own ``Eagle3Converter``
(``speculators/convert/eagle/eagle3_converter.py``, the same in 0.7-0.9): ``midlayer.*``
becomes ``layers.0.*``, every other tensor keeps its name; the vocabulary sizes come from
``t2d`` (else the verifier), the layer sizes from the source config, ``max_position_embeddings``
is the larger of source and verifier, ``speculative_tokens`` is 3, the layer config is a
Llama one. Where the release guesses, this kind asks or derives instead, and says so:

* aux layer ids: read from the source (top level or nested under ``eagle_config``), else
  ``--aux-layer-ids``; never left for readers to guess (the release writes ``null``);
* ``draft_vocab_size``: the source's, else the length of ``d2t`` or the rows of ``lm_head``
  (the release falls back to 32000);
* ``target_hidden_size``: the source's, else derived from ``fc.weight`` when it differs
  from the draft's hidden size (the release writes ``null``, so its draft cannot load);
* a source tensor dtype other than the config's ``torch_dtype``: the bytes are kept and the
  config names the tensors' dtype (the release re-casts silently).

Which tensors the output carries, with which shapes, is the eagle3 tensor contract's
business (checked by :func:`spec_format.convert.run.check_tensors` for every kind).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spec_format.convert.plan import ConvertRefused, Plan, Provenance, Request, Source, TensorMove
from spec_format.facts import catalog

MODEL_TYPE = "eagle3"
PREFIX = "midlayer."
#: the releases' Eagle3Converter defaults (used only where the source says nothing)
RELEASE_DEFAULTS = {
    "hidden_act": "silu",
    "initializer_range": 0.02,
    "rms_norm_eps": 1e-6,
    "attention_bias": False,
    "mlp_bias": False,
    "rope_theta": 10000.0,
    "num_hidden_layers": 1,
}
SPECULATIVE_TOKENS = 3  # Eagle3Converter's greedy proposal
#: flags the converter takes from the source config (False when absent, as the release)
FLAGS = ("norm_before_residual", "norm_before_fc", "fc_norm", "norm_output")
DTYPE_NAMES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64"}
AUX_KEY = "eagle_aux_hidden_state_layer_ids"
#: keys vLLM releases before 0.22.0 read only at the top level of an EAGLE-3 draft's config
#: (llama_eagle3.py: ``getattr(self.config, "norm_before_fc", False)`` in 0.18.0-0.21.0, no
#: read before 0.18.0; the model runner: ``getattr(hf_config, AUX_KEY)`` in 0.11.1-0.21.0, no
#: read before; 0.22.0 adds the ``eagle_config`` lookups), with when the value matters and
#: what those releases do instead
NESTED_ONLY_IN_VLLM = {
    "norm_before_fc": (
        lambda v: v is True,
        "0.18.0-0.21.0 reads it only at the top level (earlier releases never), so served as it "
        "is the trained input_norm before fc is skipped",
    ),
    AUX_KEY: (
        lambda v: isinstance(v, list) and bool(v),
        "0.11.1-0.21.0 reads them only at the top level (earlier releases never), so served as "
        "it is the target's default layers are captured instead",
    ),
}


class SafeAILabEagle3:
    name = "safeailab-eagle3"
    description = "SafeAILab/EAGLE-3 style checkpoint (LlamaForCausalLMEagle3, midlayer.* tensors)"

    def detect(self, config: Mapping[str, Any], tensor_names: frozenset[str]) -> bool:
        if "speculators_model_type" in config or "dflash_config" in config:
            return False
        from spec_format.runner.validation import third_party_kind

        return third_party_kind(config) == self.name or any(
            n.startswith(PREFIX) for n in tensor_names
        )

    def plan(self, source: Source, request: Request) -> Plan:
        return _Planner(source, request).plan()


KIND = SafeAILabEagle3()


class _Planner:
    def __init__(self, source: Source, request: Request) -> None:
        self.src = source
        self.cfg = dict(source.config)
        nested = self.cfg.get("eagle_config")
        self.nested = nested if isinstance(nested, Mapping) else {}
        self.req = request
        self.prov: list[Provenance] = []
        self.notes: list[str] = []
        self.where = f"{source.path}/config.json"
        self._last: tuple[str, str] = ("derived", "")  # (origin, detail) of the last lookup

    # -- helpers -------------------------------------------------------------------------
    def set(self, node: dict, pointer: str, value: Any, origin: str, detail: str) -> None:
        node[pointer.rsplit("/", 1)[-1]] = value
        self.prov.append(Provenance(pointer, origin, detail))  # type: ignore[arg-type]

    def source_value(self, key: str) -> Any:
        """A key of the source config, top level first, then ``eagle_config``."""
        if key in self.cfg:
            return self.cfg[key], key
        if key in self.nested:
            return self.nested[key], f"eagle_config.{key}"
        return None, None

    def required_int(self, key: str) -> tuple[int, str]:
        value, at = self.source_value(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConvertRefused(
                f"{self.where}: {key} is {'missing' if at is None else repr(value)}; a SafeAILab "
                "EAGLE-3 config states the draft's sizes, fix the source config"
            )
        return value, at

    # -- the plan ------------------------------------------------------------------------
    def plan(self) -> Plan:
        from spec_format.convert.run import verifier_name

        verifier = self.req.verifier
        if verifier is None:
            raise ConvertRefused(
                f"{self.src.path}: --verifier is required for a SafeAILab EAGLE-3 checkpoint: "
                "the output names its verifier (speculators_config.verifier) and takes its "
                "architectures and, without t2d, its vocabulary size from it; pass "
                "--verifier PATH or hf://ORG/NAME"
            )
        moves = self.moves()
        config: dict[str, Any] = {}
        line = self.req.format_version
        self.set(config, "/speculators_model_type", MODEL_TYPE, "derived", "the source kind")
        rec = catalog.record(MODEL_TYPE)
        assert rec is not None and rec.aux_key is not None
        self.set(
            config, "/architectures", list(rec.architectures), "derived", "what speculators writes"
        )
        release = catalog.version_entry(line).release
        self.set(config, "/speculators_version", release, "derived", f"format {line}")
        tlc = self.layer_config(verifier)
        config["transformer_layer_config"] = tlc
        H = tlc["hidden_size"]
        if "dtype" in tlc:  # save_pretrained of the model names its weights' dtype too
            self.set(config, "/dtype", tlc["dtype"], "derived", "the weights' dtype")
        self.set(config, "/draft_vocab_size", self.draft_vocab(), *self._last)
        for flag in FLAGS:
            value, at = self.source_value(flag)
            if at is None:
                self.set(config, f"/{flag}", False, "default", "Eagle3Converter default")
            else:
                self.set(config, f"/{flag}", bool(value), "source", at)
        aux = self.aux_ids()
        self.set(config, f"/{rec.aux_key}", list(aux), *self._last)
        self.aux_origin = self._last[1]
        self.note_aux_numbering(aux)
        self.note_nested_only()
        ht = self.target_hidden(H, len(aux), verifier)
        if ht is not None:
            self.set(config, "/target_hidden_size", ht, *self._last)
        config["speculators_config"] = {
            "algorithm": MODEL_TYPE,
            "default_proposal_method": "greedy",
            "proposal_methods": [
                {"proposal_type": "greedy", "speculative_tokens": SPECULATIVE_TOKENS}
            ],
            "verifier": {},
        }
        for p in ("algorithm", "default_proposal_method", "proposal_methods"):
            self.prov.append(
                Provenance(f"/speculators_config/{p}", "default", "Eagle3Converter default")
            )
        ver = config["speculators_config"]["verifier"]
        name, origin, detail = verifier_name(self.req)
        self.set(ver, "/speculators_config/verifier/name_or_path", name, origin, detail)
        archs = verifier.architectures
        if not archs:
            raise ConvertRefused(
                f"--verifier {name}: its config.json has no architectures; the output must "
                "name them (speculators_config.verifier.architectures)"
            )
        self.set(
            ver,
            "/speculators_config/verifier/architectures",
            archs,
            "verifier",
            verifier.where("architectures"),
        )
        return Plan(
            kind=KIND.name,
            config=config,
            moves=moves,
            provenance=tuple(self.prov),
            notes=tuple(self.notes),
        )

    def moves(self) -> tuple[TensorMove, ...]:
        out = []
        rec = catalog.record(MODEL_TYPE)
        assert rec is not None and rec.layers is not None
        first = f"{rec.layers.prefix}.0."  # the format's first decoder layer
        for name in self.src.tensors:
            if name.startswith(PREFIX):
                target = first + name[len(PREFIX) :]
                out.append(TensorMove((name,), target, "copy", "SafeAILab midlayer = layer 0"))
            else:
                out.append(TensorMove((name,), name, "copy", "same name in the speculators format"))
        names = self.src.tensors
        for have, want, how in (("d2t", "t2d", "target id = i + d2t[i]"),
                                ("t2d", "d2t", "d2t[i] = i-th kept target id - i")):  # fmt: skip
            if have in names and want not in names:
                why = f"rebuilt from {have} ({how}); the source has no {want}"
                out.append(TensorMove((have,), want, "derive", why, derive=f"{want}_from_{have}"))
        return tuple(out)

    def layer_config(self, verifier) -> dict[str, Any]:
        tlc: dict[str, Any] = {}
        P = "/transformer_layer_config"
        self.set(tlc, f"{P}/model_type", "llama", "default", "Eagle3Converter writes a LlamaConfig")
        vocab = self.target_vocab(verifier)
        self.set(tlc, f"{P}/vocab_size", vocab, *self._last)
        self.note_source_disagrees(vocab)
        for key in ("hidden_size", "intermediate_size", "num_attention_heads"):
            value, at = self.required_int(key)
            self.set(tlc, f"{P}/{key}", value, "source", at)
        for key in ("num_key_value_heads", "head_dim"):  # the layer class derives them
            value, at = self.source_value(key)
            if at is not None and value is not None:
                self.set(tlc, f"{P}/{key}", value, "source", at)
        for key, default in RELEASE_DEFAULTS.items():
            if key == "rope_theta":
                continue
            value, at = self.source_value(key)
            if at is not None and value is not None:
                self.set(tlc, f"{P}/{key}", value, "source", at)
            else:
                self.set(tlc, f"{P}/{key}", default, "default", "Eagle3Converter default")
        own, at = self.source_value("max_position_embeddings")
        theirs = verifier.get("max_position_embeddings")
        values = [v for v in (own, theirs) if isinstance(v, int) and not isinstance(v, bool)]
        if values:
            origin = "verifier" if theirs in values and theirs == max(values) else "source"
            detail = "the larger of the source's and the verifier's (Eagle3Converter)"
            self.set(tlc, f"{P}/max_position_embeddings", max(values), origin, detail)
            if len(values) == 2 and own < theirs:
                self.notes.append(
                    f"max_position_embeddings: the source's {own} ({at}) is raised to the "
                    f"verifier's {theirs}, as Eagle3Converter does; the draft was built (and "
                    f"most likely trained) for {own} positions, so past them acceptance falls"
                )
        self.set(tlc, f"{P}/tie_word_embeddings", False, "default", "Eagle3Converter default")
        self.set(tlc, f"{P}/use_cache", True, "default", "Eagle3Converter default")
        theta, at = self.source_value("rope_theta")
        rope: dict[str, Any] = {}
        if at is not None:
            self.set(rope, f"{P}/rope_parameters/rope_theta", theta, "source", at)
        else:
            value = RELEASE_DEFAULTS["rope_theta"]
            self.set(rope, f"{P}/rope_parameters/rope_theta", value, "default", "Eagle3Converter")
            self.notes.append(
                f"the source config has no rope_theta; wrote the converter's default {value}"
            )
        scaling, at = self.source_value("rope_scaling")
        kind = "default"
        if isinstance(scaling, Mapping):
            kind = scaling.get("rope_type", scaling.get("type", "default"))
            for k, v in scaling.items():
                if k not in ("rope_type", "type"):
                    self.set(rope, f"{P}/rope_parameters/{k}", v, "source", f"{at}.{k}")
        self.set(
            rope,
            f"{P}/rope_parameters/rope_type",
            kind,
            "source" if at else "default",
            f"{at}.rope_type" if at else "no rope_scaling in the source",
        )
        tlc["rope_parameters"] = rope
        dtype = self.dtype()
        if dtype is not None:
            self.set(tlc, f"{P}/dtype", dtype, *self._last)
        return tlc

    def note_source_disagrees(self, vocab: int) -> None:
        """Notes on source values the output replaces but an engine reading the checkpoint as
        it is (SGLang, vLLM's ``LlamaForCausalLMEagle3``) or the training library that wrote
        it (SpecForge, AngelSlim: transformers' ``from_pretrained``) would act on."""
        own, at = self.source_value("vocab_size")
        if isinstance(own, int) and not isinstance(own, bool) and own != vocab:
            whose = "the t2d tensor's length" if self._last[0] == "source" else "the verifier's"
            self.notes.append(
                f"vocab_size: the source's {own} ({at}) is not the verifier vocabulary "
                f"({vocab}, {whose}); convert writes {vocab}, but a reader that builds the draft "
                f"from this config (SGLang, SpecForge, transformers' from_pretrained) sizes its "
                f"embedding and t2d for {own} tokens, which the verifier's embedding and "
                f"vocabulary maps do not fit: set vocab_size to {vocab}"
            )
        tied, at = self.source_value("tie_word_embeddings")
        head = self.src.tensors.get("lm_head.weight")
        if tied is True and head is not None and head.shape and head.shape[0] != vocab:
            self.notes.append(
                f"tie_word_embeddings: the source's true ({at}) is written false: lm_head.weight "
                f"has {head.shape[0]} rows and the embedding {vocab}, so one tensor cannot be "
                "both; a reader that honours the flag (SGLang's EAGLE-3 draft class, "
                "transformers' from_pretrained, SpecForge when resuming) makes embed_tokens the "
                "head and drops the trained lm_head or fails on its shape: set it to false"
            )
        archs, at = self.source_value("architectures")
        if (
            isinstance(archs, list)
            and archs
            and all(isinstance(a, str) and "eagle" not in a.lower() for a in archs)
        ):
            self.notes.append(
                f"architectures: the source names {', '.join(archs)} ({at}), a base model class, "
                "not an EAGLE-3 draft class (LlamaForCausalLMEagle3): vLLM's eagle3 method "
                "renames it, but SGLang builds the class the config names, a plain model whose "
                "loader does not map this layout's unprefixed tensors, so the draft cannot be "
                "served there as it is: name LlamaForCausalLMEagle3"
            )

    def note_aux_numbering(self, aux: tuple[int, ...]) -> None:
        """Aux layer ids from the source that start at 1: the output-of-layer numbering of
        the training libraries that write this layout (SpecForge through SGLang's capture,
        NVIDIA ModelOpt's forward hooks), which SGLang recognises by the first id and shifts
        by one (sglang#25454); vLLM and the speculators format read the ids as they are."""
        if self._last[0] != "source" or not aux or aux[0] != 1 or list(aux) != sorted(aux):
            return
        shifted = ",".join(str(i + 1) for i in aux)
        self.notes.append(
            f"{AUX_KEY}: the source's {list(aux)} start at 1, the numbering of SpecForge (SGLang's "
            "capture) and NVIDIA ModelOpt, where id k is the output of verifier layer k (SGLang "
            "shifts such ids by 1, sglang#25454); vLLM reads id k as the input of layer k, so "
            "each aux state comes one layer early and acceptance collapses: if it was trained "
            f"so, convert with --aux-layer-ids {shifted}"
        )

    def note_nested_only(self) -> None:
        """Keys this layout may hold only under ``eagle_config``, which convert moves to the
        top level but vLLM releases before 0.22.0 read only at the top level of the draft's
        config (their ``llama_eagle3.py`` and model runner; 0.22.0 reads the nested key)."""
        for key, (value_ok, before) in NESTED_ONLY_IN_VLLM.items():
            if key in self.cfg or key not in self.nested or not value_ok(self.nested[key]):
                continue
            self.notes.append(
                f"eagle_config.{key}: {self.nested[key]!r} only under eagle_config; vLLM "
                f"{before}; copy it to the top level (0.22.0 and later read eagle_config)"
            )

    def dtype(self) -> str | None:
        floats = {r.dtype for r in self.src.tensors.values() if r.dtype in DTYPE_NAMES}
        declared, at = self.source_value("torch_dtype")
        if declared is None:
            declared, at = self.source_value("dtype")
        actual = DTYPE_NAMES[floats.pop()] if len(floats) == 1 else None
        if actual is not None and declared != actual:
            self.notes.append(
                f"the source config says {at} = {declared!r} but its tensors are {actual}; the "
                f"tensors are copied unchanged and the config says {actual} (the release would "
                "re-cast them; --dtype does that explicitly)"
            )
            self._last = ("derived", "the dtype of the source tensors")
            return actual
        self._last = ("source", at or "")
        return declared if isinstance(declared, str) else None

    def target_vocab(self, verifier) -> int:
        t2d = self.src.tensors.get("t2d")
        if t2d is not None and len(t2d.shape) == 1:
            self._last = ("source", "the length of the t2d tensor")
            return t2d.shape[0]
        vocab = verifier.vocab_size
        if vocab is None:
            raise ConvertRefused(
                f"--verifier {verifier.path}: no vocab_size, and the source has no t2d tensor to "
                "read the verifier vocabulary from"
            )
        self._last = ("verifier", verifier.where("vocab_size"))
        return vocab

    def draft_vocab(self) -> int:
        value, at = self.source_value("draft_vocab_size")
        if isinstance(value, int) and not isinstance(value, bool):
            self._last = ("source", at)
            return value
        for name, what in (("d2t", "the length of d2t"), ("lm_head.weight", "lm_head rows")):
            rec = self.src.tensors.get(name)
            if rec is not None and rec.shape:
                self._last = ("derived", what)
                return rec.shape[0]
        raise ConvertRefused(
            f"{self.where}: no draft_vocab_size, and neither d2t nor lm_head.weight to read it from"
        )

    def aux_ids(self) -> tuple[int, ...]:
        key = catalog.aux_key(MODEL_TYPE)
        top, nested = self.cfg.get(key), self.nested.get(key)
        if top is not None and nested is not None and top != nested and not self.req.aux_layer_ids:
            raise ConvertRefused(
                f"{self.where}: {key} is {top} at the top level but {nested} under eagle_config; "
                "readers pick different ones: pass the layers the draft was trained on with "
                "--aux-layer-ids"
            )
        found, at = (top, key) if top is not None else (nested, f"eagle_config.{key}")
        if self.req.aux_layer_ids is not None:
            flag = tuple(self.req.aux_layer_ids)
            if found is not None and list(found) != list(flag):
                self.notes.append(
                    f"--aux-layer-ids {list(flag)} replaces the source's {at} = {list(found)}"
                )
            self._last = ("flag", "--aux-layer-ids")
            return flag
        if found is None:
            raise ConvertRefused(self._no_aux_ids(key))
        if not isinstance(found, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in found
        ):
            raise ConvertRefused(f"{self.where}: {at} is {found!r}, not a list of layer numbers")
        self._last = ("source", at)
        return tuple(found)

    def _no_aux_ids(self, key: str) -> str:
        """Why convert refuses a source without aux layer ids, with what it can say of them:
        the number of hidden states ``fc.weight`` takes, and a head that declares it reads
        none (``eagle_config.use_aux_hidden_state: false``, NVIDIA's gpt-oss EAGLE v2/v3
        heads), which the speculators format cannot express."""
        from spec_format.facts.effective import reader_default_aux_ids

        states = self.fc_states()
        took = f"; fc.weight takes {states} hidden state{'s' * (states != 1)}" if states else ""
        if self.nested.get("use_aux_hidden_state") is False:
            return (
                f"{self.where}: eagle_config.use_aux_hidden_state is false: this head reads the "
                f"verifier's last hidden state, not aux layers{took}; no speculators release has a "
                "field for a head without aux layers, so no --aux-layer-ids makes a faithful "
                "conversion: serve the checkpoint as it is, with an engine release that reads "
                "eagle_config.use_aux_hidden_state"
            )
        layers = self.req.verifier.num_hidden_layers if self.req.verifier else None
        guess = reader_default_aux_ids(layers)
        if guess and (states is None or states == len(guess)):
            example = (
                f" (readers would guess --aux-layer-ids {','.join(map(str, guess))} for this "
                f"{layers}-layer verifier; pass it only if the draft was trained on them)"
            )
        elif states:
            example = f" ({states} ids: one per hidden state fc.weight takes)"
        else:
            example = ""
        return (
            f"{self.where}: no {key} (top level or under eagle_config): which verifier "
            f"layers the draft was trained on is not in the checkpoint, and readers would "
            f"guess{took}; pass them with --aux-layer-ids{example}"
        )

    def fc_states(self) -> int | None:
        """How many hidden states ``fc.weight`` takes (its inputs over the target hidden
        size: the source's ``target_hidden_size``, else the verifier's or the draft's hidden
        size), or None when the shape does not say."""
        fc = self.src.tensors.get("fc.weight")
        if fc is None or len(fc.shape) != 2:
            return None
        value, _ = self.source_value("target_hidden_size")
        sizes = [value] if isinstance(value, int) and not isinstance(value, bool) else []
        verifier = self.req.verifier
        sizes += [verifier.hidden_size if verifier else None, self.cfg.get("hidden_size")]
        for size in sizes:
            if isinstance(size, int) and size > 0 and fc.shape[1] % size == 0:
                return fc.shape[1] // size
        return None

    def target_hidden(self, H: int, aux: int, verifier) -> int | None:
        """``target_hidden_size``: the source's, else the verifier's when it differs from
        H; either way ``fc.weight`` must take ``aux`` hidden states of that size."""
        value, at = self.source_value("target_hidden_size")
        ht, written = H, None
        if isinstance(value, int) and not isinstance(value, bool):
            ht, written = value, value
            self._last = ("source", at)
        elif verifier.hidden_size is not None and verifier.hidden_size != H:
            ht, written = verifier.hidden_size, verifier.hidden_size
            self._last = ("verifier", verifier.where("hidden_size"))
        fc = self.src.tensors.get("fc.weight")
        if fc is not None and len(fc.shape) == 2 and fc.shape[1] != aux * ht:
            raise ConvertRefused(
                f"{self.src.path}: fc.weight {list(fc.shape)} takes {fc.shape[1]} inputs, but "
                f"{aux} aux layer ids ({self.aux_origin}) of hidden size {ht} make "
                f"{aux * ht}; check the aux layer ids (the draft concatenates one hidden "
                "state per id)"
            )
        return written
