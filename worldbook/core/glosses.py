"""Names and gists of entries written by the app's model in the languages a book's readers use.

A book may name its readers' languages (the book setting
``reader_languages``). When the deployment has a language model configured, the indexing worker
asks it, for each entry written in another language, for the entry's name and a one-line gist in
each reader language. These **glosses** are generated views of the author's lore, kept apart from
it: they live in their own table (never exported as the author's aliases, never rendered as
lore), are embedded by the primary model in one search view per language, and a gloss can only
lift an entry to ``gloss score - margin``, below what the author's own text would have scored
(:func:`lift_by_glosses`). A gloss stays tied to the entry text it was written from (its content
hash), so an edit retires it as it retires the entry's vectors (DESIGN §2 rule 6).

Pure: plain data in, plain data out; the language guess is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from worldbook.errors import InvalidInput

READER_LANGUAGES_SETTING = "reader_languages"
"""The book setting: the languages its readers chat in, as language codes."""

READER_LANGUAGES_MAX = 8
"""At most this many reader languages per book: each costs one model call per entry."""

GLOSS_LANGUAGES = frozenset(
    ("ar", "de", "el", "en", "es", "fr", "hi", "it", "ja", "ko", "pt", "ru", "th", "tr", "vi", "zh")
)
"""The reader languages accepted: those the engine's language guess
(:func:`worldbook.core.language_id.detect_language`) tells apart, since a gloss is checked to
be written in its language before it is kept."""

GLOSS_NAME_MAX = 120
"""Longest generated name kept (characters); a longer one is a sentence, not a name."""

GLOSS_GIST_MAX = 400
"""Longest generated gist kept (characters): one line, as the prompt asks."""

GLOSS_VIEW = "+gloss-"
"""Joins the primary model id and a language into the model id the gloss vectors are stored
under (:func:`gloss_model_id`)."""


@dataclass(frozen=True, slots=True)
class Gloss:
    """One entry's generated name and gist in one reader language.

    ``content_hash`` is the entry text's hash when the gloss was written (the gloss is current
    only while the entry's hash is the same); ``model`` names the language model that wrote it.
    """

    entry_id: str
    language: str
    name: str
    gist: str
    content_hash: str
    model: str


def gloss_text(gloss: Gloss) -> str:
    """What is embedded for a gloss: its name, a newline, its gist (as an entry's own text
    is its names then its lore, :func:`worldbook.core.embed_text.entry_text`)."""
    return f"{gloss.name}\n{gloss.gist}"


def gloss_model_id(primary_model_id: str, language: str) -> str:
    """The model id gloss vectors of ``language`` are stored under: the primary model's, so a
    new primary model retires them with its own vectors."""
    return f"{primary_model_id}{GLOSS_VIEW}{language}"


def gloss_model_ids(primary_model_id: str) -> tuple[str, ...]:
    """The model ids of every gloss view the primary model may have (one per language)."""
    return tuple(gloss_model_id(primary_model_id, lang) for lang in sorted(GLOSS_LANGUAGES))


def reader_languages(settings: Mapping[str, Any]) -> tuple[str, ...]:
    """A book's reader languages from its settings (none when unset)."""
    value = settings.get(READER_LANGUAGES_SETTING)
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(v for v in value if isinstance(v, str) and v in GLOSS_LANGUAGES))


def check_reader_languages(value: object, *, field: str) -> None:
    """The ``reader_languages`` book setting: a list of at most :data:`READER_LANGUAGES_MAX`
    distinct codes from :data:`GLOSS_LANGUAGES`."""
    known = ", ".join(sorted(GLOSS_LANGUAGES))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(
            f"{field} must be a list of language codes ({known}); got {type(value).__name__}.",
            field=field,
        )
    unknown = [v for v in value if v not in GLOSS_LANGUAGES]
    if unknown:
        raise InvalidInput(
            f"{field} has unknown language codes {unknown}; use some of: {known}.", field=field
        )
    if len(set(value)) > READER_LANGUAGES_MAX:
        raise InvalidInput(
            f"{field} names {len(set(value))} languages; the most is {READER_LANGUAGES_MAX}. "
            "Keep the languages your readers chat in.",
            field=field,
        )


def languages_to_write(entry_language: str, readers: Iterable[str]) -> tuple[str, ...]:
    """The reader languages an entry needs a gloss in: every one but the entry's own."""
    return tuple(lang for lang in dict.fromkeys(readers) if lang != entry_language)


def gloss_problem(name: str, gist: str, language: str, detect: Callable[[str], str]) -> str | None:
    """Why a generated name and gist cannot be kept as a gloss in ``language``, or None.

    A small model often answers in the wrong language or with an empty or rambling line; a
    gloss that is not in its language would only add noise to that language's view, so it is
    dropped rather than stored (the feature must never make retrieval worse)."""
    name, gist = name.strip(), gist.strip()
    if not name or not gist:
        return "empty name or gist"
    if len(name) > GLOSS_NAME_MAX:
        return f"name longer than {GLOSS_NAME_MAX} characters"
    if len(gist) > GLOSS_GIST_MAX:
        return f"gist longer than {GLOSS_GIST_MAX} characters"
    if "\n" in gist:
        return "gist of more than one line"
    if gist.casefold() == name.casefold():
        return "gist repeats the name"  # says nothing the name does not (a small model's habit)
    found = detect(gist)
    if found != language:
        return f"gist written in {found}, not {language}"
    return None


K = TypeVar("K", bound=Hashable)


def lift_by_glosses(
    scores: Mapping[K, float], gloss_scores: Mapping[K, float], margin: float
) -> dict[K, float]:
    """Each entry's score, raised to ``gloss score - margin`` where a gloss matched better.

    The margin keeps a generated view below the author's own words: a gloss decides only when
    it matches clearly better than the entry's own text did. An entry only a gloss found joins
    the scores at ``gloss score - margin``. With no gloss scores the scores come back unchanged.
    """
    out = dict(scores)
    for key, value in gloss_scores.items():
        lifted = value - margin
        if key not in out or lifted > out[key]:
            out[key] = lifted
    return out


def current_glosses(glosses: Sequence[Gloss], hashes: Mapping[str, str]) -> list[Gloss]:
    """The glosses written from their entry's current text (``hashes``: entry id -> hash)."""
    return [g for g in glosses if hashes.get(g.entry_id) == g.content_hash]
