"""scripts/sglang-facts.py's reading of a release, on a models package written here: the
registry is every module's EntryClass, a class's capture method is found through its bases
across modules (as Python's attribute lookup finds it), and the table's spans are exact."""

from __future__ import annotations

import textwrap

import pytest

from tests.common import ROOT, load_script

facts = load_script(ROOT / "scripts" / "sglang-facts.py")

M = "sglang/srt/models/"


def _release(**modules: str) -> facts.Release:
    return facts.Release({f"{M}{k}.py": textwrap.dedent(v) for k, v in modules.items()})


def test_capture_found_through_a_base_in_another_module():
    rel = _release(
        llama="""
            import torch
            class LlamaForCausalLM(torch.nn.Module):
                def set_eagle3_layers_to_capture(self, ids=None):
                    pass
            EntryClass = LlamaForCausalLM
        """,
        qwen3="""
            from sglang.srt.models.llama import LlamaForCausalLM as Base
            class Qwen3ForCausalLM(Base):
                pass
            class Qwen3VLForConditionalGeneration(object):
                pass
            EntryClass = [Qwen3ForCausalLM, Qwen3VLForConditionalGeneration]
        """,
        mistral="""
            from .llama import LlamaForCausalLM
            class MistralForCausalLM(LlamaForCausalLM):
                set_dflash_layers_to_capture = LlamaForCausalLM.set_eagle3_layers_to_capture
            EntryClass = MistralForCausalLM
        """,
    )
    got = rel.facts()["architectures"]
    assert got == {
        "LlamaForCausalLM": {"eagle3": True, "dflash": False, "delegates": False},
        "MistralForCausalLM": {"eagle3": True, "dflash": True, "delegates": False},
        "Qwen3ForCausalLM": {"eagle3": True, "dflash": False, "delegates": False},
        "Qwen3VLForConditionalGeneration": {"eagle3": False, "dflash": False, "delegates": False},
    }
    assert rel.facts()["reads_speculators"] is False


def test_guarded_definitions_module_alias_and_no_entry():
    rel = _release(
        base="""
            class Mixin:
                def set_dspark_layers_to_capture(self, ids):
                    pass
        """,
        guarded="""
            import sglang.srt.models.base as b
            try:
                class GuardedForCausalLM(b.Mixin):
                    pass
            except ImportError:
                pass
            if True:
                EntryClass = [GuardedForCausalLM] if True else []
        """,
        helpers="""
            class NotRegistered:
                def set_eagle3_layers_to_capture(self):
                    pass
        """,
    )
    got = rel.facts()["architectures"]
    assert got == {"GuardedForCausalLM": {"eagle3": False, "dflash": True, "delegates": False}}


def test_a_class_that_forwards_its_attributes_is_recorded_as_such():
    rel = _release(
        minicpmv="""
            class MiniCPMV:
                def __getattr__(self, name):
                    return getattr(self.minicpmv, name)
            EntryClass = MiniCPMV
        """
    )
    got = rel.facts()["architectures"]
    assert got == {"MiniCPMV": {"eagle3": False, "dflash": False, "delegates": True}}


def test_a_source_reading_speculators_type_is_recorded():
    rel = facts.Release({"sglang/srt/configs/x.py": "k = 'speculators_model_type'\n"})
    assert rel.facts() == {"reads_speculators": True, "architectures": {}}


FC4 = {"LlamaForCausalLMEagle3": {"default": 3, "eagle_config_ids": 4}}


def test_spans_of_releases():
    versions = ["0.4.4", "0.4.5", "0.5.0", "0.5.0.post1", "0.5.1"]
    per = {
        v: {
            "reads_speculators": False,
            "architectures": arch,
            "eagle3_head": {},
            "eagle3_layer_refusal": {},
            "eagle3_fc": fc,
            "runner_reads_use_aux": v >= "0.5.0",
        }
        for v, arch, fc in zip(
            versions,
            [
                {},
                {"A": {"eagle3": False, "dflash": False}},
                {"A": {"eagle3": True, "dflash": False}},
                {"A": {"eagle3": True, "dflash": False}},
                {},
            ],
            [{}, {}, {"LlamaForCausalLMEagle3": {"default": 3}}, FC4, FC4],
            strict=True,
        )
    }
    doc = facts.table(per)
    assert doc["releases"] == versions
    assert doc["architectures"]["A"] == {
        "registered": [["0.4.5", "0.5.0.post1"]],
        "eagle3": [["0.5.0", "0.5.0.post1"]],
    }
    assert doc["reads_speculators"] == []
    assert doc["eagle3_head"] == {} and doc["eagle3_layer_refusal"] == {}
    assert doc["eagle3_fc"] == {
        "LlamaForCausalLMEagle3": {
            "default": {"3": [["0.5.0", "0.5.1"]]},
            "eagle_config_ids": {"4": [["0.5.0.post1", "0.5.1"]]},
        }
    }
    assert doc["runner_reads_use_aux"] == [["0.5.0", "0.5.1"]]


@pytest.mark.parametrize("bad", ["x", "0.5.6-post2", "../0.5.7", "0.5.7rc1"])
def test_add_refuses_what_is_not_a_release(bad, capsys):
    assert facts.main(["--add", bad]) == 2
    assert "is not a release version" in capsys.readouterr().err


_HEAD = """
class LlamaForCausalLMEagle3(LlamaForCausalLM):
    def __init__(self, config, quant_config=None, prefix=""):
        self.config = config
        self.model = LlamaModel(config)
        {before}
        if self.config.tie_word_embeddings:
            self.lm_head = self.model.embed_tokens
        else:
{untied}
"""


@pytest.mark.parametrize(
    ("before", "untied", "worker", "expected"),
    [
        (  # 0.5.2 and later: the verifier's head when draft_vocab_size is unset
            "self.load_lm_head_from_target = False",
            "            if config.draft_vocab_size is None:\n"
            "                self.load_lm_head_from_target = True\n"
            "                config.draft_vocab_size = config.vocab_size\n"
            "            self.lm_head = ParallelLMHead(config.draft_vocab_size, 4, prefix=add_prefix('lm_head', prefix))",
            True,
            {"tied": "embed", "untied-no-draft-vocab": "target", "untied-draft-vocab": "fresh"},
        ),
        (  # the same class, but no worker reads the flag: the head is never installed
            "self.load_lm_head_from_target = False",
            "            if config.draft_vocab_size is None:\n"
            "                self.load_lm_head_from_target = True\n"
            "            self.lm_head = ParallelLMHead(1, 4)",
            False,
            {"tied": "embed", "untied-no-draft-vocab": "fresh", "untied-draft-vocab": "fresh"},
        ),
        (  # the Kimi MLA class: the size read into a local first
            "draft_vocab_size = getattr(config, 'draft_vocab_size', None)",
            "            if draft_vocab_size is None:\n"
            "                self.load_lm_head_from_target = True\n"
            "            self.lm_head = ParallelLMHead(draft_vocab_size or 1, 4)",
            True,
            {"tied": "embed", "untied-no-draft-vocab": "target", "untied-draft-vocab": "fresh"},
        ),
    ],
)
def test_the_head_decision_is_executed(before, untied, worker, expected):
    sources = {
        facts.HEAD_CLASSES["LlamaForCausalLMEagle3"]: _HEAD.format(before=before, untied=untied)
    }
    if worker:
        sources["sglang/srt/speculative/eagle_worker.py"] = "x.load_lm_head_from_target\n"
    assert facts.eagle3_head(sources) == {"LlamaForCausalLMEagle3": expected}


def test_a_class_without_the_tie_branch_has_no_answer():
    sources = {
        facts.HEAD_CLASSES["LlamaForCausalLMEagle3"]: "class LlamaForCausalLMEagle3:\n    pass\n"
    }
    assert facts.eagle3_head(sources) == {}


def test_a_layer_count_refusal_is_executed():
    module = facts.HEAD_CLASSES["LlamaForCausalLMEagle3"]
    text = textwrap.dedent("""
        class LlamaForCausalLMEagle3:
            def __init__(self, config):
                self.config = config
                if self.config.num_hidden_layers != 1:
                    raise ValueError("EAGLE3 currently only supports 1 layer")
                if config.hidden_size > 0:
                    raise ValueError("not about layers: never run")
    """)
    assert facts.eagle3_layer_refusal({module: text}) == {
        "LlamaForCausalLMEagle3": "EAGLE3 currently only supports 1 layer"
    }
    several = text.replace("!= 1", "< 1")
    assert facts.eagle3_layer_refusal({module: several}) == {}


_FC_MODULE = """
import torch
from torch import nn

def _count(config):
    ec = getattr(config, "eagle_config", None) or {}
    ids = ec.get("eagle_aux_hidden_state_layer_ids")
    return len(ids) if ids else 3

class Model(nn.Module):
    def __init__(self, config, quant_config=None, prefix=""):
        super().__init__()
        self.embed_tokens = VocabParallelEmbedding(config.vocab_size, config.hidden_size)
        width = getattr(config, "target_hidden_size", None) or config.hidden_size
        unrelated = config.vocab_size * 2
        n = COUNT
        self.fc = LINEAR(width * n, config.hidden_size, bias=False)
        self.norm = RMSNorm(config.hidden_size)

class LlamaForCausalLMEagle3(nn.Module):
    def __init__(self, config, quant_config=None, prefix=""):
        self.model = Model(config)
"""


def _fc_module(count: str, linear: str) -> str:
    return _FC_MODULE.replace("COUNT", count).replace("LINEAR", linear)


@pytest.mark.parametrize("linear", ["torch.nn.Linear", "nn.Linear", "ColumnParallelLinear"])
def test_fc_width_is_executed_through_locals_and_module_helpers(linear):
    """The statements fc's width depends on (a local, a module-level helper) are found by
    following the names back from fc; the rest of __init__ (super(), the embedding, a local
    fc does not read) is left out."""
    text = _fc_module("_count(config)", linear)
    got = facts.eagle3_fc({f"{M}llama_eagle3.py": text})["LlamaForCausalLMEagle3"]
    assert got == {
        "default": 3,
        "num_aux_hidden_states": 3,
        "eagle_config_ids": 4,
        "top_level_ids": 3,
        "num_and_eagle_config_ids": 4,
        "both_ids": 4,
        "no_aux": 3,
    }


def test_an_fc_of_a_fixed_width_and_one_that_reads_the_count():
    fixed = facts.eagle3_fc({f"{M}llama_eagle3.py": _fc_module("3", "nn.Linear")})
    assert set(fixed["LlamaForCausalLMEagle3"].values()) == {3}
    counted = facts.eagle3_fc(
        {
            f"{M}llama_eagle3.py": _fc_module(
                'getattr(config, "num_aux_hidden_states", None) or _count(config)', "nn.Linear"
            )
        }
    )["LlamaForCausalLMEagle3"]
    assert counted["num_aux_hidden_states"] == 1 and counted["num_and_eagle_config_ids"] == 1
    assert counted["eagle_config_ids"] == 4 and counted["default"] == 3


def test_the_runner_reading_use_aux_hidden_state_is_recorded():
    reads = 'ec = cfg.eagle_config\nuse = ec.get(\n    "use_aux_hidden_state", True)\n'
    assert facts.runner_reads_use_aux({"sglang/srt/model_executor/model_runner.py": reads})
    assert not facts.runner_reads_use_aux({f"{M}llama_eagle3.py": reads})
    assert not facts.runner_reads_use_aux(
        {
            "sglang/srt/model_executor/model_runner.py": "ids = ec['eagle_aux_hidden_state_layer_ids']"
        }
    )


_VLLM_STYLE = """
class LlamaModel(nn.Module):
    def __init__(self, *, vllm_config, prefix=""):
        super().__init__()
        self.config = vllm_config.speculative_config.draft_model_config.hf_config
        eagle_config = getattr(self.config, "eagle_config", None) or {}
        if "use_aux_hidden_state" in eagle_config:
            self.use_aux_hidden_state = eagle_config["use_aux_hidden_state"]
        else:
            self.use_aux_hidden_state = True
        self.layers = nn.ModuleList([Layer(i) for i in range(self.config.num_hidden_layers)])
        if self.use_aux_hidden_state:
            self.count = getattr(self.config, "num_aux_hidden_states", None) or 3
            width = getattr(self.config, "target_hidden_size", self.config.hidden_size)
            self.input_norm: RMSNorm | None = RMSNorm(width * self.count)
            self.fc = ReplicatedLinear(input_size=width * self.count, output_size=8)
"""


def test_a_vllm_style_fc_inside_a_branch_and_none_without_aux():
    """self.config is the stand-in config (its assignment from vllm_config is left out), an
    annotated attribute is not evaluated, and a head without aux states builds no fc (0)."""
    import wheel_facts

    got = wheel_facts.fc_cases(_VLLM_STYLE)
    assert got["default"] == 3 and got["num_aux_hidden_states"] == 1
    assert got["no_aux"] == 0 and got["eagle_config_ids"] == 3
