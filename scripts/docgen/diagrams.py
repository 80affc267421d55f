"""Pictures for the docs, drawn as SVG from the sources they show, so they cannot drift:

* ``validation-layers.svg``: the rule layers in the order they run, with their rule counts
  and what each needs (from the rule registry and the options of ``specfmt validate``);
* ``<type>-dataflow.svg``: how an EAGLE-3 or DFlash draft computes, labelled with the tensor
  names and shapes of its tensor contract (``schema/tensors/<type>.json``); every tensor a
  picture names must exist there;
* ``type-timeline.svg``: which format versions have which type (``schema/catalog.json``).

Text is measured with fixed per-character widths (the fonts are generic families), so every
box is sized from its own labels.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from docgen.nav import type_title
from docgen.schema_walk import DocsError, catalog_versions
from spec_format.facts import catalog, contract
from spec_format.rules import registry
from spec_format.rules.base import LAYER_PREFIX, Layer

FOLDER = "docs/diagrams"
SANS, MONO = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif", "ui-monospace, monospace"
#: average advance of one character at 1 px font size (generous: text never overflows a box)
ADVANCE = {SANS: 0.6, MONO: 0.62}
INK, MUTED, LINE = "#1f2328", "#57606a", "#8c959f"
FAMILY_COLOURS = {"chain": "#3f51b5", "block": "#00897b", "nextn": "#ef6c00", "legacy": "#9e9e9e"}


def _w(text: str, size: float, font: str = SANS) -> float:
    return len(text) * size * ADVANCE[font]


@dataclass
class _Svg:
    width: float
    title: str
    parts: list[str] = field(default_factory=list)
    height: float = 0.0

    def text(
        self, x, y, s, *, size=13, font=SANS, weight="normal", fill=INK, anchor="start", cls=""
    ):
        attrs = f' class="{cls}"' if cls else ""
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-family="{font}" font-size="{size}" '
            f'font-weight="{weight}" fill="{fill}" text-anchor="{anchor}"{attrs}>'
            f"{html.escape(s)}</text>"
        )

    def rect(self, x, y, w, h, *, fill="#ffffff", stroke=LINE, rx=6, dash=False):
        extra = ' stroke-dasharray="5 4"' if dash else ""
        self.parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.2"{extra}/>'
        )

    def arrow(self, x1, y1, x2, y2, label: str = ""):
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{MUTED}" '
            'stroke-width="1.5" marker-end="url(#arrow)"/>'
        )
        if label:
            self.text((x1 + x2) / 2 + 8, (y1 + y2) / 2 + 4, label, size=11, fill=MUTED)

    def render(self) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width:.0f} '
            f'{self.height:.0f}" width="{self.width:.0f}" height="{self.height:.0f}" '
            f'role="img" aria-label="{html.escape(self.title, quote=True)}">\n'
            f"<title>{html.escape(self.title)}</title>\n"
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" '
            f'fill="{MUTED}"/></marker></defs>\n'
            f'<rect width="100%" height="100%" fill="#ffffff"/>\n'
        )
        return head + "\n".join(self.parts) + "\n</svg>\n"


# -- the validation layers ------------------------------------------------------------------

#: what a rule's ``requires`` entry means on the command line (checked against validate)
REQUIRES = {
    "weights": "model.safetensors",
    "deep": "--deep",
    "scan": "--scan-weights",
    "verifier": "--verifier",
}


def _validate_options() -> set[str]:
    from docgen.checks import _commands

    command = _commands().commands["validate"]
    return {opt for p in command.params for opt in getattr(p, "opts", ())}


def _layer_condition(layer: Layer, options: set[str]) -> tuple[str, ...]:
    """What a layer needs, as short lines: () for a layer that runs on every config."""
    needs: set[str] = set()
    for rule in registry.RULES:
        if rule.layer is layer:
            needs |= set(rule.requires)
    unknown = needs - set(REQUIRES)
    if unknown:
        raise DocsError([f"diagram: rule layer {layer.value} requires {sorted(unknown)}"])
    flags = tuple(REQUIRES[n] for n in ("deep", "scan", "verifier") if n in needs)
    for flag in flags:
        if flag not in options:
            raise DocsError([f"diagram: specfmt validate has no option {flag}"])
    if flags:
        return flags
    return (REQUIRES["weights"],) if "weights" in needs else ()


def validation_layers() -> str:
    options = _validate_options()
    layers = [layer for layer in Layer if layer is not Layer.REWRITE]
    count = {layer: sum(1 for r in registry.RULES if r.layer is layer) for layer in layers}
    needs = {layer: _layer_condition(layer, options) for layer in layers}
    rows = [
        ("every config.json", [la for la in layers if not needs[la]]),
        ("with the weights, or when asked for", [la for la in layers if needs[la]]),
    ]
    box_w = 24 + max(
        max([_w(f"{LAYER_PREFIX[la]}  {la.value}", 15), *(_w(n, 11.5, MONO) for n in needs[la])])
        for la in layers
    )
    box_h = 50 + 16 * max(len(n) for n in needs.values())
    gap, left, row_gap = 28, 20, 52
    per_row = max(len(r[1]) for r in rows)
    svg = _Svg(width=left * 2 + per_row * (box_w + gap) + 40, title="")
    svg.title = "The rule layers of specfmt validate, in the order they run"
    y = 36
    svg.text(left, y - 12, rows[0][0], size=13, weight="bold", fill=MUTED)
    for r, (_, row) in enumerate(rows):
        for i, layer in enumerate(row):
            x = left + i * (box_w + gap)
            svg.rect(x, y, box_w, box_h, fill="#fff8e1" if needs[layer] else "#f6f8fa")
            svg.text(
                x + 12, y + 24, f"{LAYER_PREFIX[layer]}  {layer.value}", size=15, weight="bold"
            )
            svg.text(x + 12, y + 43, f"{count[layer]} rules", size=12, fill=MUTED)
            for k, need in enumerate(needs[layer]):
                svg.text(x + 12, y + 61 + 16 * k, need, size=11.5, font=MONO, fill=MUTED)
            if i:
                svg.arrow(x - gap + 2, y + box_h / 2, x - 2, y + box_h / 2)
        last_x = left + (len(row) - 1) * (box_w + gap)
        if r == 0:  # the first row continues into the second
            mid = y + box_h + row_gap / 2
            svg.parts.append(
                f'<path d="M{last_x + box_w / 2:.1f} {y + box_h:.1f} V {mid:.1f} '
                f'H {left + box_w / 2:.1f} V {y + box_h + row_gap - 2:.1f}" fill="none" '
                f'stroke="{MUTED}" stroke-width="1.5" marker-end="url(#arrow)"/>'
            )
            svg.text(
                left + box_w / 2 + 12, mid + 18, rows[1][0], size=13, weight="bold", fill=MUTED
            )
            y += box_h + row_gap
        else:
            end = last_x + box_w
            svg.arrow(end + 2, y + box_h / 2, end + 34, y + box_h / 2)
            svg.text(end + 40, y + box_h / 2 + 5, "report", size=13, weight="bold")
            y += box_h
    svg.text(
        left,
        y + 26,
        "An unknown type stops at dispatch (S); a layer without its input "
        "is skipped (-v lists it).",
        size=12,
        fill=MUTED,
    )
    svg.height = y + 40
    return svg.render()


# -- data flow of a draft type --------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    title: str
    tensors: tuple[str, ...] = ()  # exact names of the contract (loop patterns included)
    note: str = ""
    side: bool = False  # an input that joins the node below from the side


#: the order in which a draft step uses its tensors; names are checked against the contract
FLOWS: dict[str, tuple[Node, ...]] = {
    "eagle3": (
        Node(
            "normalise each aux hidden state (fc_norm) or their concatenation (norm_before_fc)",
            ("fc_norm.{i}.weight", "input_norm.weight"),
        ),
        Node("concatenate and project to the draft width", ("fc.weight",)),
        Node(
            "token embedding, concatenated with the projected hidden: 2H into layer 0",
            ("embed_tokens.weight",),
            side=True,
        ),
        Node(
            "first decoder layer (2H-wide q/k/v)",
            (
                "layers.0.hidden_norm.weight",
                "layers.0.self_attn.q_proj.weight",
                "layers.0.self_attn.k_proj.weight",
                "layers.0.self_attn.v_proj.weight",
            ),
        ),
        Node(
            "further decoder layers, l = 1 … L-1",
            ("layers.{l}.self_attn.q_proj.weight", "layers.{l}.mlp.down_proj.weight"),
            note="layer",
        ),
        Node("final norm", ("norm.weight",)),
        Node("draft vocabulary head", ("lm_head.weight",)),
        Node("draft ids to verifier ids", ("d2t", "t2d")),
    ),
    "dflash": (
        Node("concatenate and project to the draft width", ("fc.weight",)),
        Node("normalise the projected context", ("hidden_norm.weight",)),
        Node("token embedding of the block's positions", ("embed_tokens.weight",), side=True),
        Node(
            "decoder layers, l = 0 … L-1 (Qwen3-style q/k norms)",
            (
                "layers.{l}.self_attn.q_proj.weight",
                "layers.{l}.self_attn.q_norm.weight",
                "layers.{l}.mlp.down_proj.weight",
            ),
            note="layer",
        ),
        Node("final norm", ("norm.weight",)),
        Node("draft vocabulary head", ("lm_head.weight",)),
        Node("draft ids to verifier ids", ("d2t", "t2d")),
    ),
}


def _shape(spec: contract.TensorSpec) -> str:
    return "[" + ", ".join(str(d) for d in spec.shape) + "]"


def _presence(spec: contract.TensorSpec) -> str:
    required, optional = spec.required_if, spec.optional_if
    if required is True:
        return ""
    if required is False:
        return "optional" if optional is True else f"optional when {optional}"
    if optional is True:
        return f"required when {required}, else optional"
    return f"required when {required}" + (f", optional when {optional}" if optional else "")


def dataflow(model_type: str) -> str:
    c = contract.load_contract(model_type)
    record = catalog.record(model_type)
    problems = [
        f"diagram of {model_type}: tensor {name!r} is not in schema/tensors/{model_type}.json"
        for node in FLOWS[model_type]
        for name in node.tensors
        if c.spec(name) is None
    ]
    if problems:
        raise DocsError(problems)
    per_layer = len([t for t in c.tensors if t.loops and t.role in ("layer", "first_qkv")])
    size, line, left, width = 13, 19, 24, 760
    inner = width - 2 * left
    svg = _Svg(width=width, title=f"Data flow of a {type_title(model_type)} draft and its tensors")
    y = 20
    head = [f"verifier hidden states of A layers, chosen by {record.aux_key}"]
    if record.aux_offset:
        head.append(
            f"id i taps the output of verifier layer i - {record.aux_offset} (id 0: the embeddings)"
        )
    if record.mask_token:
        head.append("the block's other positions are mask tokens (mask_token_id)")
    h = 14 + line * len(head)
    svg.rect(left, y, inner, h, fill="#eef1fb", stroke=FAMILY_COLOURS[record.family])
    for k, text in enumerate(head):
        svg.text(
            left + 12,
            y + 20 + k * line,
            text,
            size=size,
            weight="bold" if k == 0 else "normal",
            fill=INK if k == 0 else MUTED,
        )
    y += h
    for node in FLOWS[model_type]:
        svg.arrow(width / 2, y + 2, width / 2, y + 28)
        y += 32
        specs = [c.spec(name) for name in node.tensors]
        lines = 1 + len(specs) + (1 if node.note == "layer" else 0)
        h = 12 + line * lines
        # an input that joins the flow here (the embedding) is dashed
        svg.rect(left, y, inner, h, fill="#ffffff" if node.side else "#f6f8fa", dash=node.side)
        svg.text(
            left + 12, y + 20, ("+ " if node.side else "") + node.title, size=size, weight="bold"
        )
        for k, spec in enumerate(specs):
            ty = y + 20 + line * (k + 1)
            svg.text(left + 20, ty, spec.name, size=12.5, font=MONO, cls="tensor")
            sx = left + 32 + _w(spec.name, 12.5, MONO)
            svg.text(sx, ty, _shape(spec), size=12.5, font=MONO, fill=MUTED)
            if _presence(spec):
                svg.text(
                    sx + 12 + _w(_shape(spec), 12.5, MONO),
                    ty,
                    _presence(spec),
                    size=11.5,
                    fill=MUTED,
                )
        if node.note == "layer":
            svg.text(
                left + 20,
                y + 20 + line * (len(specs) + 1),
                f"… {per_layer} tensor entries of decoder layers in the contract "
                "(attention, MLP, norms, optional biases)",
                size=11.5,
                fill=MUTED,
            )
        y += h
    svg.arrow(width / 2, y + 2, width / 2, y + 28)
    y += 32
    svg.text(
        width / 2,
        y + 12,
        "draft tokens, as verifier token ids",
        size=size,
        weight="bold",
        anchor="middle",
    )
    y += 30
    order = list(c.symbols)
    used = sorted(
        {
            d
            for spec in (c.spec(n) for node in FLOWS[model_type] for n in node.tensors)
            for d in _symbols(spec)
            if d in c.symbols
        },
        key=order.index,
    )
    legend = "; ".join(f"{s} = {c.symbols[s].description}" for s in used)
    for chunk in _wrap(legend, int(inner / (11.5 * ADVANCE[SANS]))):
        svg.text(left, y + 6, chunk, size=11.5, fill=MUTED)
        y += 17
    svg.text(
        left,
        y + 8,
        f"Names, shapes and presence: schema/tensors/{model_type}.json",
        size=11.5,
        fill=MUTED,
    )
    svg.height = y + 22
    return svg.render()


def _symbols(spec: contract.TensorSpec) -> set[str]:
    import re

    names: set[str] = set()
    for dim in spec.shape:
        names |= set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", str(dim)))
    return names


def _wrap(text: str, width: int) -> list[str]:
    out, current = [], ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            out.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return [*out, current] if current else out


# -- type x version timeline ----------------------------------------------------------------


def type_timeline() -> str:
    versions = catalog_versions()
    types = list(catalog.known_types())
    label_w = max(_w(f"{type_title(t)} ({t})", 13) for t in types) + 30
    col, row, top, left = 58, 28, 44, 16
    svg = _Svg(width=left + label_w + col * len(versions) + 16, title="")
    svg.title = "Which format versions have which speculators_model_type"
    for i, v in enumerate(versions):
        svg.text(
            left + label_w + i * col + col / 2, top - 12, v, size=13, weight="bold", anchor="middle"
        )
    for r, t in enumerate(types):
        y = top + r * row
        record = catalog.record(t)
        svg.text(left, y + 19, f"{type_title(t)} ({t})", size=13)
        present = [i for i, v in enumerate(versions) if t in catalog.version_entry(v).types]
        colour = FAMILY_COLOURS[record.family]
        for i in range(len(versions)):
            x = left + label_w + i * col
            if i in present:
                svg.rect(x + 3, y + 5, col - 6, row - 10, fill=colour, stroke=colour, rx=4)
            else:
                svg.parts.append(
                    f'<circle cx="{x + col / 2:.1f}" cy="{y + row / 2:.1f}" r="2" fill="{LINE}"/>'
                )
    y = top + len(types) * row + 16
    x = left
    for name in catalog.data()["families"]:
        colour = FAMILY_COLOURS.get(name)
        if colour is None:
            raise DocsError([f"diagram: no colour for type family {name!r} (FAMILY_COLOURS)"])
        svg.rect(x, y, 14, 14, fill=colour, stroke=colour, rx=3)
        svg.text(x + 20, y + 12, name, size=12.5)
        x += 34 + _w(name, 12.5)
    svg.height = y + 30
    return svg.render()


def all_diagrams() -> dict[str, str]:
    out = {
        f"{FOLDER}/validation-layers.svg": validation_layers(),
        f"{FOLDER}/type-timeline.svg": type_timeline(),
    }
    for model_type in FLOWS:
        out[f"{FOLDER}/{model_type}-dataflow.svg"] = dataflow(model_type)
    return out
