"""Writing a book's glosses with the app's model, off the turn (ADR 0023).

A gloss is an entry's name and one-line gist in one of its book's reader languages
(:mod:`worldbook.core.glosses`). :func:`write_book_glosses` is the whole job for one book and is
idempotent: entries that already have a current gloss in a language are not asked again, and
glosses whose vectors are missing (after ``index --rebuild``, a new embedder, or a save that
outlived its embedding) are embedded from the stored text, so the gloss views are rebuilt from
the database like the others. The Celery worker and the in-process writer thread call it after
indexing, and ``worldbook glosses write`` on demand; without a model, indexing calls
:func:`embed_stored_glosses` instead. The turn only reads the vectors.

One model call per entry asks for every language it lacks. Each answer is checked
(:func:`worldbook.core.glosses.gloss_problem`): a gloss in the wrong language, empty or rambling
is dropped and counted, never stored — a small model must not make retrieval worse.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from worldbook.core.glosses import (
    Gloss,
    current_glosses,
    gloss_model_id,
    gloss_problem,
    gloss_text,
    languages_to_write,
    reader_languages,
)
from worldbook.core.language_id import detect_language
from worldbook.core.records import EntryQuery, EntryRecord
from worldbook.errors import LLM_FAILURES, NotFound, WorldbookError
from worldbook.llm_port import LLM, LLMMessage, LLMRequest
from worldbook.ports import Embedder, Store
from worldbook.runtime.background import LatestPerKey
from worldbook.service.entry_languages import entry_language
from worldbook.service.llm_replies import ask_json, items_of, validate_item

log = logging.getLogger(__name__)

LORE_SHOWN = 1_500
"""Characters of an entry's lore shown to the model: enough for a name and a gist."""

TOKENS_PER_GLOSS = 120
"""Output tokens allowed per language asked (a name, a sentence and JSON punctuation)."""

SAVE_EVERY = 20
"""Entries whose glosses are saved (and embedded) together: a crash loses at most this many
model calls, and the turn sees the first glosses before a large book is done."""

LANGUAGE_NAMES = {
    "ar": "Arabic",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "hi": "Hindi",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "pt": "Portuguese",
    "ru": "Russian",
    "th": "Thai",
    "tr": "Turkish",
    "vi": "Vietnamese",
    "zh": "Chinese",
}

NATIVE_NAMES = {
    "deutsch": "de",
    "español": "es",
    "français": "fr",
    "italiano": "it",
    "日本語": "ja",
    "한국어": "ko",
    "português": "pt",
    "русский": "ru",
    "中文": "zh",
}
"""Languages' own names a model may answer with instead of the code (besides English names)."""

_BY_NAME = {name.casefold(): code for code, name in LANGUAGE_NAMES.items()} | NATIVE_NAMES


def language_code(value: str) -> str:
    """The code of a language a model named by code, English name or own name (``"Korean"``,
    ``"ko"`` and ``"한국어"`` are all ``"ko"``); the text folded as it is otherwise."""
    folded = value.strip().casefold()
    return _BY_NAME.get(folded, folded)


SYSTEM_PROMPT = (
    "You help readers of other languages find entries of a world book. For each language you "
    "are asked for, write the entry's name as a reader of that language would say it "
    "(translate a descriptive name, transliterate a proper name) and one short sentence, in "
    "that language, saying what the entry is. Write nothing else."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "glosses": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "language": {"type": "string"},
                    "name": {"type": "string"},
                    "gist": {"type": "string"},
                },
                "required": ["language", "name", "gist"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["glosses"],
    "additionalProperties": False,
}


class GlossReply(BaseModel):
    """One gloss as the model must send it (types here; the content is checked after)."""

    model_config = ConfigDict(extra="ignore")
    language: str
    name: str
    gist: str


@dataclass(slots=True)
class GlossReport:
    """What one :func:`write_book_glosses` call did."""

    asked: int = 0  # model calls
    written: int = 0  # glosses saved
    embedded: int = 0  # gloss vectors saved
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> count
    failed: int = 0  # model calls that failed

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "written": self.written,
            "embedded": self.embedded,
            "dropped": dict(self.dropped),
            "failed": self.failed,
        }


def gloss_request(entry: EntryRecord, entry_lang: str, languages: Sequence[str]) -> LLMRequest:
    """The one call that asks for an entry's glosses in ``languages``."""
    wanted = ", ".join(f"{lang} ({LANGUAGE_NAMES.get(lang, lang)})" for lang in languages)
    aliases = ", ".join(entry.aliases) or "none"
    lore = entry.lore.strip()[:LORE_SHOWN]
    user = (
        f"Entry, written in {LANGUAGE_NAMES.get(entry_lang, entry_lang)}:\n"
        f"Title: {entry.title}\nOther names: {aliases}\nLore: {lore}\n\n"
        f"Languages: {wanted}\n"
        'Reply with JSON: {"glosses": [{"language": "<code>", "name": "...", "gist": "..."}]}, '
        "one item per language."
    )
    return LLMRequest(
        messages=(LLMMessage("system", SYSTEM_PROMPT), LLMMessage("user", user)),
        schema=SCHEMA,
        schema_name="glosses",
        max_output_tokens=TOKENS_PER_GLOSS * len(languages) + 64,
        temperature=0.0,
        seed=0,
    )


def read_glosses(
    raw: Sequence[object],
    entry: EntryRecord,
    languages: Sequence[str],
    model: str,
    report: GlossReport,
    detect: Callable[[str], str] = detect_language,
) -> list[Gloss]:
    """The usable glosses of one reply: one per asked language, each checked."""
    found: dict[str, Gloss] = {}
    for i, item in enumerate(raw):
        reply, _ = validate_item(GlossReply, item, f"glosses[{i}]")
        if reply is None:
            report.drop("not a gloss object")
            continue
        language = language_code(reply.language)
        if language not in languages or language in found:
            report.drop("language not asked for")
            continue
        name, gist = reply.name.strip(), " ".join(reply.gist.split())
        problem = gloss_problem(name, gist, language, detect)
        if problem is not None:
            report.drop("wrong language" if problem.startswith("gist written") else problem)
            continue
        found[language] = Gloss(entry.id, language, name, gist, entry.content_hash, model)
    return list(found.values())


def write_book_glosses(
    book_id: str,
    *,
    store: Store,
    llm: LLM | None,
    embedder: Embedder,
    model: str,
    on_saved: Callable[[set[str]], None] | None = None,
    max_calls: int | None = None,
) -> GlossReport:
    """Write the glosses a book lacks and embed the glosses that lack vectors.

    Nothing happens for a book without reader languages. Without a model (``llm`` None)
    only the embedding of stored glosses runs. ``on_saved`` receives the book id after
    vectors were saved (to drop its cached gloss indexes); ``max_calls`` caps the model calls
    of this run (the rest waits for the next run).
    """
    report = GlossReport()
    book = store.get_book(book_id)
    readers = reader_languages(book.settings)
    if not readers:
        return report
    stored = store.book_glosses(book_id)
    if llm is None and not stored:
        return report  # no model to write glosses and none stored to embed
    entries = store.list_entries(book_id, EntryQuery(enabled=True))
    if llm is not None:
        have = {(g.entry_id, g.language) for g in stored}
        pending: list[Gloss] = []
        for n, entry in enumerate(entries):
            if max_calls is not None and report.asked >= max_calls:
                break
            lang = entry_language(entry.title, entry.lore)
            missing = [x for x in languages_to_write(lang, readers) if (entry.id, x) not in have]
            if not missing:
                continue
            pending.extend(_ask(llm, entry, lang, missing, model, report))
            if (n + 1) % SAVE_EVERY == 0 and pending:
                report.written += store.save_glosses(book_id, pending)
                pending = []
        if pending:
            report.written += store.save_glosses(book_id, pending)
        if report.written:
            stored = store.book_glosses(book_id)
    embed_missing_gloss_vectors(
        book_id, entries, stored, store=store, embedder=embedder, report=report
    )
    if report.embedded and on_saved is not None:
        on_saved({book_id})
    return report


def _ask(
    llm: LLM,
    entry: EntryRecord,
    entry_lang: str,
    languages: Sequence[str],
    model: str,
    report: GlossReport,
) -> list[Gloss]:
    report.asked += 1
    try:
        reply = ask_json(llm, gloss_request(entry, entry_lang, languages))
    except LLM_FAILURES as exc:
        # One entry's failure must not stop the book; the next run asks again.
        assert isinstance(exc, WorldbookError)
        log.warning("glosses of entry %s not written: %s", entry.id, exc.message)
        report.failed += 1
        return []
    items, problems = items_of(reply, "glosses")
    if reply.data is None or problems:
        report.drop("not JSON with a glosses array")
        return []
    return read_glosses(items, entry, languages, model, report)


def embed_missing_gloss_vectors(
    book_id: str,
    entries: Sequence[EntryRecord],
    glosses: Sequence[Gloss],
    *,
    store: Store,
    embedder: Embedder,
    report: GlossReport,
) -> None:
    """Embed, per language, those of the book's stored ``glosses`` that are current (written
    from their entry's text as it is) and have no current vector."""
    hashes = {e.id: e.content_hash for e in entries}
    by_language: dict[str, list[Gloss]] = {}
    for gloss in current_glosses(glosses, hashes):
        by_language.setdefault(gloss.language, []).append(gloss)
    for language, glosses in by_language.items():
        model_id = gloss_model_id(embedder.model_id, language)
        # The store returns current vectors only (their entry's hash is the entry's now).
        done = set(store.load_book_vectors(book_id, model_id).entry_ids)
        todo = [g for g in glosses if g.entry_id not in done]
        if not todo:
            continue
        vectors = embedder.embed_passages([gloss_text(g) for g in todo])
        items = [(g.entry_id, g.content_hash, vectors[i]) for i, g in enumerate(todo)]
        report.embedded += sum(store.save_vectors_many(model_id, items))


def books_with_readers(book_ids: Iterable[str], *, store: Store) -> list[str]:
    """The books among these that still exist and name reader languages, in the order given:
    the only ones a gloss run has anything to do for (a Celery deployment queues no task for
    the others)."""
    found: list[str] = []
    for book_id in dict.fromkeys(book_ids):
        try:
            book = store.get_book(book_id)
        except NotFound:  # deleted after its entries were indexed
            continue
        if reader_languages(book.settings):
            found.append(book_id)
    return found


def embed_stored_glosses(
    book_ids: Iterable[str],
    *,
    store: Store,
    embedder: Embedder,
    on_saved: Callable[[set[str]], None] | None = None,
) -> int:
    """Embed the stored glosses that lack vectors of the primary model, for these books (those
    without reader languages, or gone since, are skipped); no language model is asked. How
    many vectors were saved.

    Indexing calls it when no model writes glosses: a deployment that wrote glosses once and
    then changed its embedder (or rebuilt its index) keeps them searchable."""
    embedded = 0
    for book_id in dict.fromkeys(book_ids):
        try:
            report = write_book_glosses(
                book_id, store=store, llm=None, embedder=embedder, model="", on_saved=on_saved
            )
        except NotFound:  # deleted after its entries were indexed
            continue
        embedded += report.embedded
    return embedded


class BookGlossWriter:
    """Writes books' glosses on one daemon thread, once per book however often it is asked:
    the in-process deployment's gloss worker (Celery deployments run a task instead).

    ``write(book_id)`` is :func:`write_book_glosses` bound to the process's ports. A request
    that arrives while a book is being written waits and runs once more after it.
    """

    DELAY_S = 1.0  # after the newest request: a burst of indexing batches costs one run

    def __init__(self, write: Callable[[str], GlossReport]) -> None:
        self._write = write
        self._runs: LatestPerKey[str, str] = LatestPerKey(
            self._run, name="worldbook-glosses", delay_s=self.DELAY_S
        )

    def submit(self, book_ids: Iterable[str]) -> None:
        for book_id in book_ids:
            self._runs.submit(book_id, book_id)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no book is waiting or being written (tests); False on timeout."""
        return self._runs.wait_idle(timeout)

    def _run(self, book_id: str) -> None:
        try:
            report = self._write(book_id)
        except NotFound:
            return  # the book was purged meanwhile
        except WorldbookError as exc:  # the store or the model is down: the next run retries
            log.warning("glosses of book %s not written: %s", book_id, exc.message)
            return
        log.info("glosses of book %s: %s", book_id, report.as_dict())
