"""Hostile input (DESIGN §6): every case ends in a clear worldbook error, quickly."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests.unit._formats_helpers import (
    LORE,
    card_png,
    chunk,
    dumps,
    make_png,
    make_zip,
    needs_samples,
    sample,
)
from worldbook.adapters.formats import SUPPORTED_FORMATS, parse_book
from worldbook.errors import InvalidInput, LimitExceeded, PayloadTooLarge, UnsupportedFormat

ENTRY = {"uid": 0, "key": ["k"], "comment": "Title", "content": LORE}


def st_with(entry_patch: dict[str, object]) -> bytes:
    return dumps({"entries": {"0": {**ENTRY, **entry_patch}}})


@pytest.mark.parametrize(
    "data",
    [
        b'{"entries": {',
        b'{"entries": {"0": {"uid": 0,}}}',
        b"[1, 2",
        b'{"a": NaN}',
        b'{"entries": {"0": 1' + b"1" * 5000 + b"}}",
    ],
    ids=["truncated", "trailing-comma", "array", "nan", "huge-int"],
)
def test_invalid_json(data: bytes) -> None:
    with pytest.raises(InvalidInput):
        parse_book(data)


@needs_samples
def test_truncated_sample_json() -> None:
    data = sample("Eldoria.json")
    with pytest.raises(InvalidInput, match="not valid JSON"):
        parse_book(data[: len(data) // 2])


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"content": {"a": 1}}, 'entries["0"].content'),
        ({"key": 5}, 'entries["0"].key'),
        ({"key": ["ok", 3]}, 'entries["0"].key[1]'),
        ({"constant": "yes"}, 'entries["0"].constant'),
        ({"order": "first"}, 'entries["0"].order'),
        ({"comment": ["x"]}, 'entries["0"].comment'),
        ({"order": float("inf")}, None),
    ],
)
def test_wrong_entry_field_types_name_the_field(patch: dict[str, object], field: str) -> None:
    data = (
        st_with(patch)
        if patch.get("order") != float("inf")
        else b'{"entries":{"0":{"order":1e999}}}'
    )
    with pytest.raises(InvalidInput) as info:
        parse_book(data)
    if field:
        assert info.value.field == field


@pytest.mark.parametrize(
    "doc",
    [
        {"entries": {"0": [1, 2]}},
        {"entries": [1]},
        {"spec": "chara_card_v2", "data": [1]},
        {"spec": "chara_card_v2", "data": {"character_book": {"entries": {"a": 1}}}},
        {
            "spec": "chara_card_v2",
            "data": {"character_book": {"entries": [{"keys": ["a"], "extensions": []}]}},
        },
        {"spec": "lorebook_v3", "data": "book"},
        {"lorebookVersion": 2, "entries": {"a": 1}},
        {"lorebookVersion": 2, "entries": [{"text": {"a": 1}, "keys": ["k"]}]},
        {"kind": "memory", "entries": [[]]},
        {"type": "risu", "data": {"a": 1}},
        {"worldinfo": [3]},
        {"worldinfo_v2": []},
        {"storyContainerVersion": 1, "content": []},
    ],
)
def test_wrong_types_at_every_level(doc: object) -> None:
    with pytest.raises(InvalidInput):
        parse_book(dumps(doc))


@pytest.mark.parametrize("doc", [42, "text", None, [], [1, 2], {"foo": 1}, {"entries": 5}])
def test_unknown_json_lists_what_we_read(doc: object) -> None:
    with pytest.raises(UnsupportedFormat) as info:
        parse_book(dumps(doc))
    assert SUPPORTED_FORMATS["sillytavern"] in info.value.message


@pytest.mark.parametrize("data", [b"", b"hello world", b"\x00\x01\x02binary", b"GIF89a...."])
def test_unknown_bytes_are_unsupported(data: bytes) -> None:
    with pytest.raises(UnsupportedFormat, match="We read: SillyTavern"):
        parse_book(data)


@pytest.mark.parametrize("opener", ["[", '{"a":', '{"entries":['])
def test_deep_nesting_is_refused_before_parsing(opener: str) -> None:
    with pytest.raises(InvalidInput, match="deeper than 64"):
        parse_book((opener * 200_000).encode())


def test_millions_of_containers_are_refused_before_parsing() -> None:
    with pytest.raises(InvalidInput, match="JSON arrays/objects"):
        parse_book(b"[" + b"[]," * 600_000 + b"[]]")


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    tricky = '[[[[{{{{\\"\\\\' * 500
    result = parse_book(st_with({"content": LORE + tricky}))
    assert result.entries[0].lore == LORE + tricky


def test_png_without_card_chunk() -> None:
    with pytest.raises(InvalidInput, match="no character card"):
        parse_book(make_png(chunk(b"tEXt", b"Comment\x00hello")))


@needs_samples
def test_truncated_png() -> None:
    data = sample("default_Seraphina.png")
    with pytest.raises(InvalidInput, match="truncated"):
        parse_book(data[: len(data) - 100])
    with pytest.raises(InvalidInput, match="truncated"):
        parse_book(data[:20])


def test_png_chunk_with_broken_base64_or_json() -> None:
    with pytest.raises(InvalidInput, match="base64"):
        parse_book(make_png(chunk(b"tEXt", b"chara\x00@@@@not-base64")))
    import base64

    broken = base64.b64encode(b'{"spec": "chara_card_v2", "data": {')
    with pytest.raises(InvalidInput, match="not valid JSON"):
        parse_book(make_png(chunk(b"tEXt", b"chara\x00" + broken)))
    with pytest.raises(InvalidInput, match="JSON object"):
        parse_book(card_png("chara", [1, 2]))


def test_png_chunk_length_beyond_file() -> None:
    good = make_png()
    lying = good[:8] + b"\x7f\xff\xff\xff" + good[12:]
    with pytest.raises(InvalidInput, match="truncated or corrupt"):
        parse_book(lying)


def test_charx_zip_bomb_is_refused() -> None:
    bomb = make_zip({"card.json": b"{" + b" " * 50_000_000 + b"}"})
    assert len(bomb) < 200_000
    with pytest.raises(PayloadTooLarge):
        parse_book(bomb)


def test_charx_declared_size_lie_is_capped(tmp_path: object) -> None:
    """A member whose header understates its size is still cut off at the cap."""
    big = b'{"spec":"chara_card_v3","data":{"name":"' + b"a" * 3_000_000 + b'"}}'
    data = bytearray(make_zip({"card.json": big}))
    # rewrite the central directory's uncompressed size of card.json to a small number
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (1000).to_bytes(4, "little")
    with pytest.raises((PayloadTooLarge, InvalidInput)):
        parse_book(bytes(data), max_bytes=100_000)


@pytest.mark.parametrize("name", ["../card.json", "/etc/passwd", "a/../../b", "C:/x"])
def test_charx_path_traversal_is_refused(name: str) -> None:
    data = make_zip({"card.json": dumps({"spec": "chara_card_v3"}), name: b"x"})
    with pytest.raises(InvalidInput, match="unsafe file names"):
        parse_book(data)


def test_zip_without_card_json_and_broken_zip() -> None:
    with pytest.raises(InvalidInput, match=r"no card\.json"):
        parse_book(make_zip({"other.json": b"{}"}))
    with pytest.raises(InvalidInput, match="cannot be read"):
        parse_book(b"PK\x03\x04" + b"\x00" * 100)


def test_encrypted_charx_is_refused() -> None:
    data = bytearray(make_zip({"card.json": b"{}"}))
    central = data.rfind(b"PK\x01\x02")
    data[central + 8] |= 0x1  # general purpose flag: encrypted
    with pytest.raises(InvalidInput, match="encrypted"):
        parse_book(bytes(data))


def test_oversized_input_is_refused_by_size_first() -> None:
    huge = b"{" + b" " * (200 * 1024 * 1024)
    with pytest.raises(PayloadTooLarge, match="import file"):
        parse_book(huge)
    with pytest.raises(PayloadTooLarge):
        parse_book(st_with({}), max_bytes=10)


def test_too_many_entries_is_a_limit_error() -> None:
    doc = {"entries": [{**ENTRY, "uid": i} for i in range(2001)]}
    with pytest.raises(LimitExceeded, match="entries per book"):
        parse_book(dumps(doc))


def test_utf16_with_bom_is_read_and_without_bom_is_refused() -> None:
    text = json.dumps({"entries": {"0": ENTRY}})
    for codec in ("utf-16", "utf-16-be"):
        data = text.encode(codec)
        if codec == "utf-16-be":
            data = b"\xfe\xff" + data
        assert parse_book(data).entries[0].title == "Title"
    with pytest.raises(InvalidInput, match="UTF-16"):
        parse_book(text.encode("utf-16-le"))
    with pytest.raises(InvalidInput, match="UTF-32"):
        parse_book(text.encode("utf-32"))


def test_utf8_bom_is_accepted() -> None:
    data = b"\xef\xbb\xbf" + st_with({})
    assert parse_book(data).entries[0].title == "Title"


def test_latin1_text_is_refused_clearly() -> None:
    data = st_with({"content": LORE + "é"}).decode().encode("latin-1")
    with pytest.raises(InvalidInput, match="not UTF-8"):
        parse_book(data)


def test_not_bytes_is_refused() -> None:
    with pytest.raises(InvalidInput, match="bytes"):
        parse_book("text")  # type: ignore[arg-type]


def test_zip_module_errors_do_not_escape() -> None:
    data = make_zip({"card.json": dumps({"spec": "chara_card_v3"})})
    corrupted = bytearray(data)
    start = corrupted.find(b"card.json") + len(b"card.json")
    corrupted[start : start + 8] = b"\xff" * 8  # damage the compressed stream
    try:
        parse_book(bytes(corrupted))
    except (InvalidInput, zipfile.BadZipFile) as exc:
        assert isinstance(exc, InvalidInput)
