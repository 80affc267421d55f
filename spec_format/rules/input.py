"""Input rules (I): the file exists, is readable, is JSON, and is a speculators config.

The engine and :mod:`spec_format.jsonload` emit these findings while reading inputs (the
rule and the parameters of its message); the classes carry the ids, severities, message
templates and documentation.
"""

from __future__ import annotations

from spec_format.report import Severity
from spec_format.rules.base import Layer, Rule


class _InputRule(Rule):
    abstract = True
    layer = Layer.INPUT
    engine_emitted = True


class PathNotFound(_InputRule):
    """The path given on the command line does not exist.

    ## What it checks
    Every path passed to `specfmt validate` exists.

    ## Why it matters
    A typo in a CI script would otherwise validate nothing and pass.

    ## Example
    `specfmt validate checkpoints/qwen3-8b-eagle3` where the folder is called `qwen3_8b_eagle3`.

    ## Use instead
    Pass an existing `config.json` or checkpoint directory.
    """

    id = "I001"
    name = "path-not-found"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "path": "{path}: no such file or directory",
        "file": "{path}: no such file",
    }


class FileUnreadable(_InputRule):
    """The file exists but cannot be read (permissions, a directory where a file was
    expected, an I/O error), or it is larger than any config could be.

    ## What it checks
    The file can be opened and read, and is at most 16 MiB.

    ## Why it matters
    Nothing else can be checked about a file that cannot be read.

    ## Example
    A `config.json` without read permission for the CI user; a 2 GB file named `config.json`.

    ## Use instead
    Fix the permissions, or point specfmt at the real `config.json`.
    """

    id = "I002"
    name = "file-unreadable"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "os": "{path}: cannot read: {reason}",
        "not-a-file": "{path}: {kind}; expected a JSON file",
        "too-large": (
            "{path}: {size:,} bytes is larger than the {limit:,}-byte limit for a JSON config; "
            "this is not a config.json"
        ),
        "remote": "{reason}",
    }


class EmptyFile(_InputRule):
    """The config file is empty.

    ## What it checks
    The file holds more than whitespace.

    ## Why it matters
    An empty `config.json` is usually an interrupted write or upload; every reader fails
    on it.

    ## Example
    A zero-byte `config.json` left by a killed `save_pretrained`.

    ## Use instead
    Re-save or re-download the checkpoint.
    """

    id = "I003"
    name = "empty-file"
    since = "0.1.0"
    severity = Severity.ERROR
    template = "{path}: the file is empty; expected a JSON object"


class NotUtf8(_InputRule):
    """The file is not valid UTF-8, or a string escapes a lone UTF-16 surrogate.

    ## What it checks
    The bytes decode as UTF-8, and no string holds a lone surrogate escape such as
    `"\\ud800"` (valid JSON syntax, but no UTF-8 file can hold the character it names).

    ## Why it matters
    JSON must be UTF-8; transformers reads configs as UTF-8 and fails on anything else. A
    lone surrogate makes every UTF-8 writer fail, so the config cannot be saved again.

    ## Example
    A config edited on Windows and saved as UTF-16 or Latin-1; `"name": "\\ud800"`.

    ## Use instead
    Save the file as UTF-8 (without a byte-order mark).
    """

    id = "I004"
    name = "not-utf8"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{path}:{line}:{column}: byte 0x{byte:02x} is not valid UTF-8; JSON files must be "
        "UTF-8 encoded"
    )


class Utf8Bom(_InputRule):
    """The file starts with a UTF-8 byte-order mark.

    ## What it checks
    The file does not begin with the bytes EF BB BF.

    ## Why it matters
    Python's `json.loads` refuses a BOM ("Unexpected UTF-8 BOM"), so transformers,
    speculators and vLLM cannot load the config although editors show nothing wrong.
    specfmt strips it and checks the rest.

    ## Example
    A config saved by an editor set to "UTF-8 with BOM".

    ## Use instead
    Save as plain UTF-8.
    """

    id = "I005"
    name = "utf8-bom"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{path}: starts with a UTF-8 byte-order mark, which transformers' json.load refuses; "
        "save the file as UTF-8 without BOM"
    )


class InvalidJson(_InputRule):
    """The file is not valid JSON.

    ## What it checks
    The text parses as JSON; the finding gives the line and column of the first error.

    ## Why it matters
    Every reader fails on it.

    ## Example
    ```json
    {"speculators_model_type": "eagle3",}
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "eagle3"}
    ```
    """

    id = "I006"
    name = "invalid-json"
    since = "0.1.0"
    severity = Severity.ERROR
    template = "{path}:{line}:{column}: not valid JSON: {detail}"


class NotAnObject(_InputRule):
    """The top-level JSON value is not an object.

    ## What it checks
    `config.json` holds a JSON object.

    ## Why it matters
    Configs are key/value objects; a list or a string is not a config.

    ## Example
    ```json
    [{"speculators_model_type": "eagle3"}]
    ```

    ## Use instead
    ```json
    {"speculators_model_type": "eagle3"}
    ```
    """

    id = "I007"
    name = "not-an-object"
    since = "0.1.0"
    severity = Severity.ERROR
    template = "{path}: the top-level JSON value is {found}, expected an object ({{...}})"


class NestedTooDeep(_InputRule):
    """The JSON is nested more deeply than any config (64 levels).

    ## What it checks
    Nesting depth is at most 64.

    ## Why it matters
    Real configs nest four levels; a deeper file is not a config, and very deep nesting
    can crash parsers.

    ## Example
    `[[[[...]]]]` ten thousand levels deep.

    ## Use instead
    Point specfmt at the checkpoint's real `config.json`.
    """

    id = "I008"
    name = "nested-too-deep"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "recursion": "{path}: JSON nested too deeply to parse; not a config.json",
        "limit": "{path}: JSON nested more than {limit} levels deep; not a config.json",
    }


class DuplicateKey(_InputRule):
    """A key appears twice in the same JSON object.

    ## What it checks
    No object repeats a key.

    ## Why it matters
    Python keeps the last value silently, other readers keep the first or refuse the file,
    so two engines can read two different configs from one file.

    ## Example
    ```json
    {"norm_before_residual": false, "norm_before_residual": true}
    ```

    ## Use instead
    Keep one key with the intended value.
    """

    id = "I009"
    name = "duplicate-key"
    since = "0.1.0"
    severity = Severity.WARNING
    template = (
        "key {key!r} appears more than once in the same object; Python readers silently keep "
        "the last value, other readers may keep the first: remove the duplicate"
    )


class NonFiniteNumber(_InputRule):
    """The file uses `NaN`, `Infinity` or `-Infinity`, which are not JSON, or a number no
    64-bit reader holds.

    ## What it checks
    Every number is finite JSON: integers within the int64 range, floats within the
    double range (`1e999` is valid JSON text, but Python reads it as `Infinity`).

    ## Why it matters
    Python's json module writes and reads these literals, but JSON Schema validators, other
    languages and strict parsers reject the file. Out-of-range numbers overflow or lose
    their value in C, Rust, Go and JavaScript readers, and `specfmt migrate`/`fix` would
    write them back as `Infinity`; they refuse such a file instead.

    ## Example
    ```json
    {"accept_tolerance": NaN}
    ```

    ## Use instead
    ```json
    {"accept_tolerance": 0.0}
    ```
    """

    id = "I010"
    name = "non-finite-number"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{literal} is not valid JSON (Python accepts it, other readers and JSON Schema tools "
        "do not): write a finite number or null"
    )


class NoConfigInDirectory(_InputRule):
    """A directory was given but it holds no `config.json`.

    ## What it checks
    A checkpoint directory contains `config.json`.

    ## Why it matters
    Without it the directory is not a Hugging Face checkpoint; engines cannot load it.

    ## Example
    `specfmt validate out/` where the checkpoint was saved to `out/checkpoint_best/`.

    ## Use instead
    Pass the checkpoint directory itself, or use `--recursive` to search a tree.
    """

    id = "I011"
    name = "no-config-in-directory"
    since = "0.1.0"
    severity = Severity.ERROR
    template = {
        "directory": (
            "{path} is a directory with no config.json in it; pass the checkpoint directory "
            "itself, or use --recursive"
        ),
        "recursive": "{path} is a directory with no draft config.json anywhere below it",
        "remote": "{path} has no config.json at its top level",
    }


class InternalError(_InputRule):
    """Checking this input hit a bug in specfmt.

    ## What it checks
    Nothing about the input itself: the engine reports a bug in one of its own checks here
    instead of stopping the run, so every other input is still checked and reported.

    ## Why it matters
    One odd file must not hide the results of the others; the run exits 70 so CI notices.

    ## Example
    An unforeseen value that makes a rule raise an exception.

    ## Use instead
    Report the bug with the input file (rerun with `SPECFMT_DEBUG=1` for the traceback);
    the other findings of the run are still valid.
    """

    id = "I012"
    name = "internal-error"
    since = "0.1.0"
    severity = Severity.ERROR
    template = (
        "{path}: internal error while checking this input ({error}); this is a bug in specfmt"
    )


#: jsonload problem kind -> rule
BY_PROBLEM_KIND: dict[str, type[Rule]] = {
    "not-found": PathNotFound,
    "unreadable": FileUnreadable,
    "too-large": FileUnreadable,
    "empty": EmptyFile,
    "not-utf8": NotUtf8,
    "bom": Utf8Bom,
    "not-json": InvalidJson,
    "not-object": NotAnObject,
    "too-deep": NestedTooDeep,
    "duplicate-key": DuplicateKey,
    "non-finite-number": NonFiniteNumber,
    "number-out-of-range": NonFiniteNumber,
    "lone-surrogate": NotUtf8,
}
