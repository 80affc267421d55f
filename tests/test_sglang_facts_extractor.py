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


def test_spans_of_releases():
    versions = ["0.4.4", "0.4.5", "0.5.0", "0.5.0.post1", "0.5.1"]
    per = {
        v: {
            "reads_speculators": False,
            "architectures": arch,
            "eagle3_head": {},
            "eagle3_layer_refusal": {},
        }
        for v, arch in zip(
            versions,
            [
                {},
                {"A": {"eagle3": False, "dflash": False}},
                {"A": {"eagle3": True, "dflash": False}},
                {"A": {"eagle3": True, "dflash": False}},
                {},
            ],
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
