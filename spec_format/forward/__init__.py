"""``specfmt forward``: a small torch reference forward for speculators-format drafts.

``run_forward(ForwardOptions(...))`` loads a checkpoint strictly and runs its draft; the
result renders as text or JSON. torch is imported only when ``run_forward`` is called
(the ``forward`` extra): importing this package does not import it.

Layout: ``config`` reads config.json through validate's checks and resolves it (no
torch); ``limits`` bounds what one run may compute (no torch); ``blocks`` holds the shared modules
(RMSNorm, RoPE, eager attention, MLP, decoder layer, masks); one module per algorithm
(``eagle3``, ``dflash``, ``peagle``, ``dspark``, ``dflash2``, ``xpress``, ``mtp``) states its
difference from them; ``loader`` is the strict loader, ``inputs`` the verifier-side inputs,
``dump`` the ``--dump``/``--compare`` files, ``result`` the options, result and renderer.
"""

from spec_format.forward.errors import CheckpointError, UnsupportedError
from spec_format.forward.result import ForwardOptions, ForwardResult, render_text
from spec_format.forward.run import run_forward

__all__ = [
    "CheckpointError",
    "ForwardOptions",
    "ForwardResult",
    "UnsupportedError",
    "render_text",
    "run_forward",
]
