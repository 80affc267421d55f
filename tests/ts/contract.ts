// Hand-written checks that the generated TypeScript types are as strict as the schema where
// it matters: each `@ts-expect-error` line must fail to type-check, or tsc reports the
// directive as unused. tests/test_typescript.py adds every example config on top of these.
import type { SpeculatorsDraftConfig } from "../../generated/typescript/0.9/speculators";
import type { DFlashConfig } from "../../generated/typescript/0.9/dflash";
import type { Eagle3Config, SpeculatorsConfig, TransformerLayerConfig } from "../../generated/typescript/0.9/eagle3";

const speculatorsConfig: SpeculatorsConfig = {
  algorithm: "eagle3",
  default_proposal_method: "greedy",
  proposal_methods: [{ proposal_type: "greedy", speculative_tokens: 3 }],
  verifier: { name_or_path: "Qwen/Qwen3-8B", architectures: ["Qwen3ForCausalLM"] },
};
const layers: TransformerLayerConfig = { hidden_size: 4096, num_hidden_layers: 1, num_attention_heads: 32, vocab_size: 151936 };

export const minimal: Eagle3Config = {
  speculators_model_type: "eagle3",
  speculators_config: speculatorsConfig,
  transformer_layer_config: layers,
  norm_before_residual: false,
  some_key_speculators_keeps: "extra keys are allowed, as in speculators",
};
export const viaRoot: SpeculatorsDraftConfig = minimal;

// @ts-expect-error an unknown speculators_model_type is no draft config
export const unknownType: SpeculatorsDraftConfig = { ...minimal, speculators_model_type: "eagle-3" };

// @ts-expect-error speculators_config is required
export const missingSpeculatorsConfig: Eagle3Config = { speculators_model_type: "eagle3", transformer_layer_config: layers };

export const wrongType: DFlashConfig = {
  speculators_model_type: "dflash",
  speculators_config: { ...speculatorsConfig, algorithm: "dflash" },
  transformer_layer_config: layers,
  // @ts-expect-error block_size is a number, not a string
  block_size: "8",
};

export const emptyProposals: Eagle3Config = {
  ...minimal,
  // @ts-expect-error proposal_methods needs at least one entry
  speculators_config: { ...speculatorsConfig, proposal_methods: [] },
};

export const wrongProposal: Eagle3Config = {
  ...minimal,
  // @ts-expect-error proposal_type is "greedy" only
  speculators_config: { ...speculatorsConfig, proposal_methods: [{ proposal_type: "sampling" }] },
};

// The example in docs/guide/schemas.md: the union narrows on speculators_model_type.
export function blockSize(config: SpeculatorsDraftConfig): number | undefined {
  switch (config.speculators_model_type) {
    case "dflash":
    case "dspark":
      return config.block_size; // narrowed to DFlashConfig | DSparkConfig
    default:
      return undefined;
  }
}
