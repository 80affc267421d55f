"""Random edits of real configs, shared by the tests that compare two checking paths on them.

`mutated_config(data, most)` draws one of the bundled example and release configs and applies
1 to `most` edits: a key removed or a value replaced by a random JSON value, anywhere except
`speculators_model_type` (which picks the schema the paths are compared under).
"""

from __future__ import annotations

import copy
import json

from hypothesis import strategies as st

from tests.common import EXAMPLES, RELEASES

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
BASES = [json.loads((p / "config.json").read_text()) for p in EXAMPLES] + [
    json.loads(p.read_text()) for p in RELEASES
]


def _paths(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def mutated_config(data, most: int) -> dict:
    """A copy of a drawn base config with 1..most random removals or replacements."""
    config = copy.deepcopy(data.draw(st.sampled_from(BASES)))
    paths = [p for p in _paths(config) if p != ("speculators_model_type",)]
    for _ in range(data.draw(st.integers(1, most))):
        path = data.draw(st.sampled_from(paths))
        parent = config
        try:
            for part in path[:-1]:
                parent = parent[part]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(json_values)
        except (KeyError, IndexError, TypeError):
            continue
    return config
