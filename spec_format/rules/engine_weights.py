"""What a named vLLM release's EAGLE-3 drafter can load (C020).

The facts are the ``models.eagle3.weights`` block of the reader table: how many aux hidden
states the release sizes ``fc`` for, which optional modules it builds under which flag, and
how its ``load_weights`` fails on a tensor it has not built. They are read from each
release's ``llama_eagle3.py`` by ``scripts/vllm-digests.py`` (``--check`` re-reads them from
every wheel), not executed: the block says ``read-not-executed``. The tensors a config
implies come from the type's tensor contract (``schema/tensors/eagle3.json``): ``fc`` takes
``A`` aux hidden states (the length of ``eagle_aux_hidden_state_layer_ids``, 3 when unset),
``input_norm`` exists when ``norm_before_fc`` is true, ``fc_norm.{i}`` when ``fc_norm`` is. A
release builds an optional module only when its model code has it and its config reader (the
table's rows) passes the flag on.
"""

from __future__ import annotations

from collections.abc import Iterator

from spec_format import catalog
from spec_format.report import Severity
from spec_format.rules.base import Context, Hit, Layer, Rule
from spec_format.rules.engines import named_engines


def _aux_count(value) -> int:
    return len(value) if isinstance(value, list) and value else 3


class EngineCannotLoadDraft(Rule):
    """A named vLLM release cannot load the EAGLE-3 draft's tensors."""

    id = "C020"
    name = "engine-cannot-load-draft"
    layer = Layer.CONSUMER
    severity = Severity.ERROR
    since = "0.1.0"

    def check(self, ctx: Context) -> Iterator[Hit]:
        # the types whose drafter a release's table file describes (models.<type>.weights)
        for engine in named_engines(ctx):
            weights = engine.data.get("models", {}).get(ctx.model_type, {}).get("weights")
            if weights and engine.serves(ctx.model_type):
                yield from self._check(ctx, engine, weights)

    def _check(self, ctx: Context, engine, weights: dict) -> Iterator[Hit]:
        where = f"{engine.id} ({weights['from']}, {weights['status']})"
        aux = catalog.aux_key(ctx.model_type)
        wants = _aux_count(ctx.config.get(aux)) if aux else 3
        sized = weights["fc_aux_layers"]
        if isinstance(sized, str):  # a key: sized by the ids the release's reader passes on
            reading = engine.reading(ctx.model_type, sized, ctx.config)
            sized = _aux_count(reading.value if reading.how != "ignored" else None)
        if sized != wants:
            yield Hit(
                f"fc.weight takes {wants} aux hidden states, but {where} sizes fc for {sized}: "
                "the load fails on its shape",
                pointer=f"/{aux}",
            )
        built = weights.get("optional", {})
        pairs = (("norm_before_fc", "input_norm.weight"), ("fc_norm", "fc_norm.{i}.weight"))
        for flag, tensor in pairs:
            if ctx.config.get(flag) is not True:
                continue
            # the module exists when the model code has it and the config reader passes the flag
            reading = engine.reading(ctx.model_type, flag, ctx.config)
            if tensor not in built:
                why = "never builds it"
            elif reading.how == "ignored" or not reading.value:
                why = f"builds it only under {flag}, which its config reader never passes on"
            else:
                continue
            yield Hit(
                f"{flag} is true, so the draft has {tensor}; {where} {why}, and loading it "
                f"fails ({weights['unknown_tensor']})",
                pointer=f"/{flag}",
            )
