"""Hugging Face ``tokenizer.json`` files through the ``tokenizers`` package.

Counts exclude special tokens ([CLS], [SEP], <s>…): lore is spliced into a prompt that the
chat template already wraps, so only the text's own tokens cost budget. Truncation and padding
stored in the file (sentence-transformers files pin both to 128/256) are switched off, or every
long text would count as the model's maximum.

Id: ``hf:<path to tokenizer.json>``; the canonical id holds the resolved absolute path. Counts
are cached by id, so replacing a file in place keeps stale counts — give a new file a new path.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer as HfTokenizer

from worldbook.adapters.tokenizers._fit import fit_prefix
from worldbook.errors import InvalidInput

PREFIX = "hf:"
FORM = "hf:<path to a tokenizer.json>"


class HuggingFaceTokenizer:
    """A ``tokenizer.json`` loaded once; see the module docstring."""

    is_estimate = False

    def __init__(self, path: Path, *, name: str | None = None) -> None:
        self._path = path.resolve()
        # A named file (settings) is reported by its name only: callers never see server paths.
        self._name = name
        shown = f"configured tokenizer {name!r}" if name else f"tokenizer file {str(self._path)!r}"
        if not self._path.is_file():
            raise InvalidInput(
                f"The {shown} does not exist; "
                + ("fix WORLDBOOK_HF_TOKENIZERS." if name else f"pass {FORM} naming a file."),
                field="tokenizer",
            )
        try:
            tokenizer = HfTokenizer.from_file(str(self._path))
        except Exception as exc:  # the bindings raise bare Exception on a bad file
            raise InvalidInput(
                f"The {shown} is not a Hugging Face tokenizer.json; "
                "use the tokenizer.json that ships with the model.",
                field="tokenizer",
            ) from exc
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer

    @property
    def id(self) -> str:
        return f"{PREFIX}{self._name or self._path}"

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def truncate(self, text: str, max_tokens: int) -> str:
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        offsets = encoding.offsets  # character offsets into ``text``, one per token

        def prefix_for(k: int) -> str:
            return text[: offsets[k - 1][1]]

        return fit_prefix(text, max_tokens, self.count, prefix_for, len(encoding.ids))


def canonical(spec: str) -> str | None:
    if not spec.startswith(PREFIX):
        return None
    raw = spec[len(PREFIX) :].strip()
    if not raw:
        raise InvalidInput(f"Tokenizer {spec!r} names no file; write {FORM}.", field="tokenizer")
    return f"{PREFIX}{Path(raw).expanduser().resolve()}"


def load(canonical_id: str) -> HuggingFaceTokenizer:
    return HuggingFaceTokenizer(Path(canonical_id[len(PREFIX) :]))


def load_named(name: str, path: Path) -> HuggingFaceTokenizer:
    """A tokenizer.json the operator listed in settings under ``name`` (id ``hf:<name>``)."""
    return HuggingFaceTokenizer(path, name=name)
