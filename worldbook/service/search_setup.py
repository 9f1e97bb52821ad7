"""How the vector index of a deployment searches, from settings (ADR 0003): the conversation's
query combination and, for models that ship a language basis, the language correction with
the entry languages it centres rows by."""

from __future__ import annotations

from dataclasses import dataclass

from worldbook.adapters.language_correction import LanguageCorrection, load_language_correction
from worldbook.core.query import Method, QueryCombination
from worldbook.ports import Store
from worldbook.service.entry_languages import EntryLanguages
from worldbook.settings import WorldbookSettings


@dataclass(frozen=True, slots=True)
class SearchSetup:
    combination: QueryCombination
    correction: LanguageCorrection | None
    languages: EntryLanguages | None


def search_setup(settings: WorldbookSettings, model_id: str, store: Store) -> SearchSetup:
    """The combination (centred recency max with the configured decay) and, when enabled and
    the model has a basis, the language correction."""
    combination = QueryCombination(Method.CENTRED_RECENCY_MAX, settings.query_recency_decay)
    correction = language_correction(settings, model_id)
    languages = EntryLanguages(store) if correction is not None else None
    return SearchSetup(combination, correction, languages)


def language_correction(settings: WorldbookSettings, model_id: str) -> LanguageCorrection | None:
    """The language correction the service applies to ``model_id``'s vectors: None when it is
    turned off or the model has no basis."""
    if not settings.language_correction:
        return None
    return load_language_correction(model_id, shrink=settings.language_centring_shrink)
