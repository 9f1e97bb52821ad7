"""Classic and world lore in one turn, on the in-memory fakes (DESIGN §3)."""

from __future__ import annotations

import pytest

from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.records import BookRecord
from worldbook.core.turn_request import ChatCounts
from worldbook.core.types import BookMode, Message, ModelProfile, Via
from worldbook.errors import StorageUnavailable
from worldbook.service import library
from worldbook.service.cast import BookSource, CastMember
from worldbook.service.contract import SelectionOut
from worldbook.service.services import Services
from worldbook.service.turns import TurnResult, preview, select_turn
from worldbook.testing import InMemoryStore, fake_services

PROFILE = ModelProfile(input_window=8192, tokenizer_id="fake:words")
LORE = "Lore long enough to pass the twenty character minimum of an entry."


def _book(
    services: Services, mode: BookMode, drafts: list[EntryDraft], **settings: object
) -> BookRecord:
    book = services.store.create_book(
        "alice", BookDraft(title=f"A {mode} book", mode=mode, settings=dict(settings))
    )
    services.store.add_entries(book.id, drafts)
    return book


def _turn(services: Services, book_ids: list[str], text: str, **more: object) -> TurnResult:
    return select_turn(
        services,
        user_id="alice",
        source=BookSource(book_ids=tuple(book_ids)),
        messages=[Message("user", text)],
        profile=PROFILE,
        **more,  # type: ignore[arg-type]
    )


def test_world_and_classic_lore_in_one_turn_keep_the_stable_prefix() -> None:
    services = fake_services()
    world = _book(
        services, BookMode.WORLD, [EntryDraft(title="Realm", lore=f"{LORE} The realm.", canon=True)]
    )
    classic = _book(
        services,
        BookMode.CLASSIC,
        [
            EntryDraft(title="Dragon", lore="Dragons breathe fire.", keys=["dragon"]),
            EntryDraft(title="Voice", lore="Speak softly.", keys=["dragon"], role="assistant"),
        ],
    )
    alone = _turn(services, [world.id], "a dragon")
    both = _turn(services, [world.id, classic.id], "a dragon")
    assert both.rendered.stable == alone.rendered.stable != ""  # byte-identical prefix
    messages = both.rendered.openai_messages()
    assert messages[0] == {"role": "system", "content": alone.rendered.stable}
    assert messages[1:] == [
        {"role": "system", "content": "Dragons breathe fire."},
        {"role": "assistant", "content": "Speak softly."},
    ]
    anthropic = both.rendered.anthropic()
    assert anthropic["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert anthropic["messages"] == [{"role": "assistant", "content": "Speak softly."}]
    out = SelectionOut.model_validate(both.to_json())  # the typed contract holds both paths
    assert [(e.title, e.via) for e in out.injected] == [("Dragon", "keyword"), ("Voice", "keyword")]
    assert {r.book_id for r in out.trace} == {world.id, classic.id}


def test_the_lorebook_slot_sits_between_the_prefix_and_per_turn_lore() -> None:
    services = fake_services()
    world = _book(
        services,
        BookMode.WORLD,
        [EntryDraft(title=f"Topic {i}", lore=f"{LORE} Number {i}. " * 30) for i in range(10)]
        + [EntryDraft(title="Realm", lore=f"{LORE} The realm.", canon=True)],
    )
    classic = _book(
        services, BookMode.CLASSIC, [EntryDraft(title="Sky", lore="Green sky.", constant=True)]
    )
    result = _turn(services, [world.id, classic.id], "Tell me of Topic 3.")
    roles = [m["content"][:12] for m in result.rendered.openai_messages()]
    assert (
        roles[0].startswith("# World lore")
        and roles[1] == "Green sky."
        and roles[2].startswith("# Lore for")
    )
    vias = [e.via for e in result.selection.injected]
    assert vias.index(Via.CONSTANT) < vias.index(Via.LITERAL)  # render order in `injected`


def test_classic_usage_counts_constants_as_canon_and_keys_as_full() -> None:
    services = fake_services()
    book = _book(
        services,
        BookMode.CLASSIC,
        [
            EntryDraft(title="Sky", lore="Green sky.", constant=True),
            EntryDraft(title="Dragon", lore="Fire.", keys=["dragon"]),
        ],
    )
    _turn(services, [book.id], "a dragon")
    preview(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book.id,)),
        message="dragon",
        profile=PROFILE,
    )
    usage = {u.entry_id: u for u in services.store.entry_usage(book.id).values()}
    by_title = {e.title: usage[e.id] for e in services.store.list_entries(book.id)}
    assert (by_title["Sky"].canon, by_title["Sky"].full) == (1, 0)
    assert (by_title["Dragon"].canon, by_title["Dragon"].full) == (0, 1)
    assert services.store.book_turns(book.id) == 1  # the preview counted nothing


def test_chat_state_is_written_by_real_turns_only() -> None:
    services = fake_services()
    book = _book(
        services,
        BookMode.CLASSIC,
        [EntryDraft(title="Glue", lore="Sticky.", keys=["glue"], extensions={"sticky": 4})],
    )
    source = BookSource(book_ids=(book.id,))
    preview(services, user_id="alice", source=source, message="glue", profile=PROFILE, chat_id="c")
    assert services.store.chat_states("alice", "c", [book.id]) == {}
    assert services.store.chat_log("alice", "c") == []
    _turn(services, [book.id], "glue", chat_id="c", chat=ChatCounts(chat_length=2))
    assert book.id in services.store.chat_states("alice", "c", [book.id])
    later = _turn(services, [book.id], "nothing", chat_id="c", chat=ChatCounts(chat_length=4))
    assert [e.ref.title for e in later.selection.injected] == ["Glue"]
    assert (
        "sticky" in later.selection.trace[-1].reason
        or later.selection.injected[0].via is Via.CONSTANT
    )
    # no chat id: nothing is remembered
    again = _turn(services, [book.id], "nothing", chat=ChatCounts(chat_length=4))
    assert again.selection.injected == ()


def test_a_failed_chat_write_fails_the_turn_and_counts_nothing() -> None:
    class Down(InMemoryStore):
        def record_chat_turn(self, *args: object, **kwargs: object) -> None:
            raise StorageUnavailable("down")

    services = fake_services(store=Down())
    book = _book(
        services, BookMode.CLASSIC, [EntryDraft(title="Glue", lore="Sticky.", keys=["glue"])]
    )
    with pytest.raises(StorageUnavailable):
        _turn(services, [book.id], "glue", chat_id="c")
    assert services.store.book_turns(book.id) == 0


def test_hybrid_keyword_lore_is_charged_to_the_lorebook_budget() -> None:
    services = fake_services()
    long = " ".join(["word"] * 380)  # too long for what list order leaves: index lines
    book = _book(
        services,
        BookMode.HYBRID,
        [EntryDraft(title=f"Topic {i}", lore=f"{LORE} Number {i}. " * 30) for i in range(10)]
        + [
            EntryDraft(title="Vault", lore=f"{LORE} {long}", keys=["treasure"], priority=2),
            EntryDraft(title="Crypt", lore=f"{LORE} {long}", keys=["treasure"], priority=1),
        ],
        token_budget=500,
    )
    result = _turn(services, [book.id], "treasure")
    sel = result.selection
    keyword = [e.ref.title for e in sel.injected if e.via is Via.KEYWORD]
    assert keyword == ["Vault"]  # the Crypt would take the lorebook over its 500 tokens
    assert sel.lorebook_budget == 500 and 0 < sel.lorebook_tokens <= 500
    assert "Vault" not in [line.ref.title for line in sel.index]  # in full now, not indexed
    assert sel.per_turn_tokens <= sel.per_turn_budget  # the world budget is untouched
    crypt = [r for r in sel.trace if r.title == "Crypt"]
    assert len(crypt) == 1  # one record: the world's (the keyword drop is not repeated)


def test_global_books_join_every_turn_of_their_user() -> None:
    services = fake_services()
    book = _book(
        services, BookMode.CLASSIC, [EntryDraft(title="Sky", lore="Green sky.", constant=True)]
    )
    story = _book(services, BookMode.WORLD, [EntryDraft(title="Realm", lore=LORE, canon=True)])
    library.attach(services, "alice", book.id, "global", "alice")
    library.attach(services, "alice", story.id, "character", "hero")
    source = BookSource(characters=(CastMember("hero", "Hero"),))
    result = select_turn(
        services, user_id="alice", source=source, messages=[Message("user", "hi")], profile=PROFILE
    )
    assert [e.ref.title for e in result.selection.canon] == ["Realm"]
    assert [e.ref.title for e in result.selection.injected] == ["Sky"]
    bobs = services.store.create_book("bob", BookDraft(title="Bob's"))
    services.store.add_entries(bobs.id, [EntryDraft(title="Bob", lore=LORE)])
    bob = select_turn(
        services,
        user_id="bob",
        source=BookSource(book_ids=(bobs.id,)),
        messages=[Message("user", "hi")],
        profile=PROFILE,
    )
    assert {r.book_id for r in bob.selection.trace} == {bobs.id}


def test_sillytavern_extras_are_read_from_extensions() -> None:
    from worldbook.service.classic_books import st_extras

    ext = {
        "excludeRecursion": True,
        "preventRecursion": False,
        "delayUntilRecursion": 2,
        "group": "weather, sky",
        "groupOverride": True,
        "groupWeight": 40,
        "useGroupScoring": None,
        "sticky": 3,
        "cooldown": 0,
        "delay": "5",  # malformed: ignored, never an error
        "card": {"use_regex": False},
    }
    got = st_extras(ext)
    assert got == {
        "exclude_recursion": True,
        "prevent_recursion": False,
        "delay_until_recursion": 2,
        "group": "weather, sky",
        "group_override": True,
        "group_weight": 40,
        "group_scoring": None,
        "sticky": 3,
        "cooldown": None,
        "delay": None,
        "use_regex": False,
    }
    assert st_extras({"delayUntilRecursion": True})["delay_until_recursion"] == 1
    assert st_extras({})["use_regex"] is None and st_extras({})["group_weight"] == 100


def test_inclusion_groups_from_an_imported_book_decide_in_a_turn() -> None:
    services = fake_services()
    drafts = [
        EntryDraft(
            title=f"Weather {i}",
            lore=f"Weather {i}.",
            keys=["rain"],
            extensions={"group": "weather", "groupOverride": i == 1},
            order=100 + i,
        )
        for i in range(3)
    ]
    book = _book(services, BookMode.CLASSIC, drafts)
    result = _turn(services, [book.id], "rain")
    assert [e.ref.title for e in result.selection.injected] == ["Weather 1"]
    lost = [r for r in result.selection.trace if r.title != "Weather 1"]
    assert all(r.reason.startswith("group: ") for r in lost)


def test_without_a_log_only_changed_state_is_written() -> None:
    class Counting(InMemoryStore):
        writes = 0

        def record_chat_turn(self, *args: object, **kwargs: object) -> None:
            Counting.writes += 1
            super().record_chat_turn(*args, **kwargs)  # type: ignore[arg-type]

    services = fake_services(store=Counting(), chat_log_turns=0)
    book = _book(
        services,
        BookMode.CLASSIC,
        [EntryDraft(title="Glue", lore="Sticky.", keys=["glue"], extensions={"sticky": 4})],
    )
    _turn(services, [book.id], "nothing", chat_id="c", chat=ChatCounts(chat_length=2))
    assert Counting.writes == 0  # nothing changed, nothing to log: no transaction
    _turn(services, [book.id], "glue", chat_id="c", chat=ChatCounts(chat_length=4))
    assert Counting.writes == 1 and services.store.chat_log("alice", "c") == []
    assert book.id in services.store.chat_states("alice", "c", [book.id])


def test_token_counts_follow_the_turns_tokenizer() -> None:
    from worldbook.testing import StaticTokenizers, WordTokenizer

    class Doubled(WordTokenizer):
        @property
        def id(self) -> str:
            return "fake:double"

        def count(self, text: str) -> int:
            return 2 * super().count(text)

    services = fake_services()
    services.tokenizers = StaticTokenizers(
        {"fake:words": WordTokenizer(), "fake:double": Doubled()}
    )
    book = _book(
        services, BookMode.CLASSIC, [EntryDraft(title="Sky", lore="Green sky.", constant=True)]
    )
    words = _turn(services, [book.id], "hi")
    doubled = select_turn(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book.id,)),
        messages=[Message("user", "hi")],
        profile=ModelProfile(input_window=8192, tokenizer_id="fake:double"),
    )
    assert doubled.selection.injected[0].tokens == 2 * words.selection.injected[0].tokens


def test_a_new_classic_book_version_is_built_from_what_changed() -> None:
    # ADR 0008: an edit re-reads and re-makes the edited entries only; the book is
    # exactly what a full build gives (compared on a second, cold cache), and the unchanged
    # entries are the very same objects (what the compiled matcher reuses their specs by).
    from worldbook.service.classic_books import ClassicBookCache

    services = fake_services()
    store = services.store
    drafts = [EntryDraft(title=f"E{i}", lore=f"{LORE} {i}", keys=[f"k{i}"]) for i in range(12)]
    book = _book(services, BookMode.CLASSIC, drafts, scan_depth=3)
    counter = services.token_counter()
    cache = services.classic_books

    def built(with_cache: ClassicBookCache) -> object:
        return with_cache.get(
            store.get_book(book.id), tokenizer_id="fake:words", count_many=counter.count_many
        )

    first = built(cache)
    entries = store.list_entries(book.id)
    store.update_entry(entries[3].id, lore=LORE + " Changed.", keys=["k3", "new key"])
    store.set_enabled(book.id, [entries[4].id], False)
    store.delete_entries(book.id, [entries[5].id])
    store.move_entries(book.id, [entries[9].id], to="first")
    store.add_entries(book.id, [EntryDraft(title="Brand new", lore=LORE, keys=["fresh"])])
    store.update_book(book.id, settings={"scan_depth": 5, "recursive_scanning": True})
    incremental = built(cache)
    assert cache.incremental_builds == 1 and cache.full_builds == 1
    assert incremental == built(ClassicBookCache(store))
    kept = {e.id: e for e in first.entries}  # type: ignore[attr-defined]
    same = [e for e in incremental.entries if kept.get(e.id) is e]  # type: ignore[attr-defined]
    assert len(same) == 8  # 12, less the edited, switched, deleted and moved ones
    store.update_book(book.id, mode=BookMode.HYBRID)  # another mode: built from scratch
    assert built(cache) == built(ClassicBookCache(store)) and cache.full_builds == 2


def test_the_first_turn_after_a_classic_edit_sees_the_edit() -> None:
    services = fake_services()
    drafts = [
        EntryDraft(title=f"E{i}", lore=f"Lore of entry {i}.", keys=[f"k{i}"]) for i in range(8)
    ]
    book = _book(services, BookMode.CLASSIC, drafts)
    assert [e.ref.title for e in _turn(services, [book.id], "k2").selection.injected] == ["E2"]
    entry = services.store.list_entries(book.id)[2]
    library.update_entry(services, "alice", entry.id, {"keys": ["other"], "lore": "New lore."})
    assert _turn(services, [book.id], "k2").selection.injected == ()
    injected = _turn(services, [book.id], "other").selection.injected
    assert [(e.ref.title, e.text) for e in injected] == [("E2", "New lore.")]
    assert services.classic_matchers.incremental_builds == 1  # one edit, one new version
