"""``specfmt inspect``: is a draft worth serving against its target.

* :mod:`.draft_params`: the draft's parameters and bytes by tensor role (header-only);
* :mod:`.target_params`: the verifier's parameters per token, from its headers or config;
* :mod:`.economics`: expected tokens, speedup, break-even acceptance, best gamma;
* :mod:`.vocab_ceiling` and :mod:`.token_freq`: the acceptance ceiling of a pruned draft
  vocabulary on a workload;
* :mod:`.run` puts them together, :mod:`.render` writes the text, :mod:`.plot` the picture.
"""
