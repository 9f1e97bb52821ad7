"""Ports of work done off the turn or beside it: the indexing queue, the usage sink, and the
tokenizers a deployment offers (DESIGN §4 "Queue", "Tokenizers")."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from worldbook.core.tokens import Tokenizer


class GlossQueue(Protocol):
    """Where books wait for their glosses to be written (ADR 0023): a Celery task per book, or
    the in-process writer thread."""

    def submit(self, book_ids: Iterable[str]) -> None:
        """Ask for these books' missing glosses to be written (idempotent)."""
        ...


@runtime_checkable
class IndexQueue(Protocol):
    """Where entries wait to be embedded: Celery over Redis, or an in-process worker."""

    def enqueue(self, entry_ids: Sequence[str]) -> None:
        """Ask for these entries to be indexed (idempotent; safe to call twice)."""
        ...

    def healthy(self) -> bool:
        """Whether work handed over now will be picked up."""
        ...

    def pending(self) -> int | None:
        """Ids waiting in this process (None when the queue lives elsewhere, e.g. a broker)."""
        ...

    def close(self) -> None:
        """Stop handing work over (after the batch in flight, for an in-process worker)."""
        ...


@runtime_checkable
class TokenizerSource(Protocol):
    """Tokenizers by id, restricted to what the operator configured (no file paths from
    requests: ``hf:<name>`` names a file listed in settings)."""

    @property
    def default_id(self) -> str:
        """The canonical id of the deployment's default tokenizer."""
        ...

    def canonical_id(self, tokenizer_id: str | None) -> str:
        """The id a loaded tokenizer reports; ``None`` means the default. Raises
        ``InvalidInput`` naming the accepted ids for an id that is not allowed."""
        ...

    def get(self, tokenizer_id: str | None) -> Tokenizer:
        """The tokenizer (loaded once); same errors as :meth:`canonical_id`."""
        ...


@runtime_checkable
class UsageSink(Protocol):
    """Where answered turns report which entries reached the model (written off the turn path)."""

    def record(self, book_ids: Sequence[str], uses: Sequence[tuple[str, str]]) -> None: ...

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Write what is queued now (readers in this process then see their own turns)."""
        ...

    def close(self, timeout: float | None = 10.0) -> None: ...

    def pending(self) -> int:
        """Turns recorded but not written yet."""
        ...

    @property
    def dropped(self) -> int:
        """Turns whose usage was dropped (the writer was closing)."""
        ...
