"""Character Card V2/V3 lorebooks: card JSON, PNG ``chara``/``ccv3`` chunks, CHARX, ``lorebook_v3``.

Facts from formats.md §2: V2 and V3 cards carry ``data.character_book`` (entries are an array);
PNG cards hold base64 JSON in ``tEXt`` chunks, ``ccv3`` preferred over ``chara`` (SPEC_V3); a
CHARX is a zip with ``card.json`` at its root; ``{"spec": "lorebook_v3", "data": book}`` is the
standalone book. SillyTavern stores its own entry fields in each entry's ``extensions``; those
are renamed to SillyTavern names (one vocabulary for every importer and exporter), unknown
extension keys are kept as they are, and unmapped top-level entry fields go under ``"card"``.
"""

from __future__ import annotations

import base64
import binascii
import io
import lzma
import zipfile
import zlib
from typing import Any

from worldbook.adapters.formats import png
from worldbook.adapters.formats.jsontext import decode_text, load_json
from worldbook.adapters.formats.limits import ZIP_MAX_MEMBERS, ZIP_MAX_RATIO
from worldbook.adapters.formats.sillytavern import CARD_EXT_TO_ST, read_entry
from worldbook.adapters.formats.source import (
    Fields,
    SourceBook,
    SourceEntry,
    or_default,
    require_object,
)
from worldbook.errors import InvalidInput, PayloadTooLarge

CARD_NS = "card"  # extensions key for card fields SillyTavern has no name for
_TOP_TO_ST = {
    "keys": "key",
    "secondary_keys": "keysecondary",
    "comment": "comment",
    "content": "content",
    "constant": "constant",
    "selective": "selective",
    "insertion_order": "order",
    "enabled": "enabled",
}


def read_card_entry(obj: object, where: str, index: int) -> tuple[SourceEntry, tuple[float, int]]:
    top = Fields(obj, where)
    raw = top.obj
    ext = require_object(or_default(raw.get("extensions"), {}), f"{where}.extensions")
    top.used.add("extensions")
    st: dict[str, Any] = {CARD_EXT_TO_ST.get(k, k): v for k, v in ext.items()}
    for name, st_name in _TOP_TO_ST.items():
        if name in raw:
            st[st_name] = raw[name]
            top.used.add(name)
    st.setdefault("selective", False)  # ST import reads `entry.selective || false`
    if "case_sensitive" in raw and "caseSensitive" not in st:
        st["caseSensitive"] = raw["case_sensitive"]
        top.used.add("case_sensitive")
    ident = raw.get("id")
    if isinstance(ident, int) and not isinstance(ident, bool) and "uid" not in st:
        st["uid"] = ident
        top.used.add("id")
    where_pos = raw.get("position")
    if where_pos in ("before_char", "after_char"):
        derived = 0 if where_pos == "before_char" else 1
        if "position" not in st:
            st["position"] = derived
            top.used.add("position")
        elif (st["position"] == 0) == (derived == 0):
            top.used.add("position")  # derivable from extensions.position; export rewrites it
    if raw.get("use_regex") is True:
        top.used.add("use_regex")  # SillyTavern always writes true; so does our export
    entry, display, _uid = read_entry(st, where, where)
    if raw.get("priority") is not None:
        entry.priority = top.integer("priority", 0)
    return top.finish(entry, CARD_NS), (display if display is not None else index, index)


def read_character_book(book_obj: object, where: str, fmt: str, fallback_title: str) -> SourceBook:
    f = Fields(book_obj, where)
    book = SourceBook(format=fmt)
    book.title = f.string("name") or fallback_title
    book.description = f.string("description")
    for name, setting in (("scan_depth", "scan_depth"), ("token_budget", "token_budget")):
        if f.has(name):
            book.settings[setting] = f.integer(name, 0)
    if f.has("recursive_scanning"):
        book.settings["recursive_scanning"] = f.boolean("recursive_scanning", False)
    entries = f.entry_list("entries", f"{where}.entries")
    f.used.add("extensions")
    keyed: list[tuple[tuple[float, int], SourceEntry]] = []
    for i, item in enumerate(entries):
        entry, sort_key = read_card_entry(item, f"{where}.entries[{i}]", i)
        keyed.append((sort_key, entry))
    keyed.sort(key=lambda pair: pair[0])
    book.entries = [entry for _, entry in keyed]
    book.extensions = dict(
        require_object(or_default(f.obj.get("extensions"), {}), f"{where}.extensions")
    )
    f.keep_rest(book.extensions, CARD_NS)
    book.notes.extend(f.notes)
    if not entries:
        book.notes.append("the lorebook has no entries")
    return book


def read_card(doc: dict[str, Any], fmt: str) -> SourceBook:
    """A V1/V2/V3 card object → its lorebook, or InvalidInput when it has none."""
    data = doc.get("data") if isinstance(doc.get("spec"), str) else doc
    data = require_object(data, "data")
    name = data.get("name") if isinstance(data.get("name"), str) else "Character"
    book_obj = data.get("character_book")
    if book_obj is None:
        linked = data["extensions"] if isinstance(data.get("extensions"), dict) else {}
        world = linked.get("world")
        hint = (
            f" It links a separate World Info book named {world!r}; import that file instead."
            if isinstance(world, str) and world
            else ""
        )
        raise InvalidInput(f"There is no lorebook in this card ({name!r}).{hint}")
    book = read_character_book(book_obj, "data.character_book", fmt, f"{name}'s Lorebook")
    version = doc.get("spec_version")
    try:
        if doc.get("spec") == "chara_card_v3" and float(str(version)) > 3.0:
            book.notes.append(f"card spec_version {version} is newer than 3.0; read as 3.0")
    except ValueError:
        pass
    return book


def card_format(doc: dict[str, Any], container: str) -> str:
    spec = doc.get("spec")
    version = "ccv3" if spec == "chara_card_v3" else "ccv2" if spec == "chara_card_v2" else "ccv1"
    return f"{version}_{container}"


def decode_chunk(text: str, keyword: str) -> Any:
    """base64(UTF-8 JSON) as the card specs say; plain JSON text is accepted too."""
    if text.lstrip().startswith("{"):
        return load_json(
            text.encode("latin-1").decode("utf-8", "replace"), f"The PNG's {keyword!r} chunk"
        )
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError) as exc:
        raise InvalidInput(
            f"The PNG's {keyword!r} chunk is not valid base64-encoded UTF-8; the card is damaged."
        ) from exc
    return load_json(decoded, f"The PNG's {keyword!r} chunk")


def read_png(data: bytes) -> tuple[str, dict[str, Any], list[str]]:
    """The card JSON from a PNG (ccv3 preferred), its format name and notes; or NovelAI data."""
    chunks = png.text_chunks(data)
    notes: list[str] = []
    for keyword in ("ccv3", "chara", "naidata"):
        if keyword not in chunks:
            continue
        try:
            doc = decode_chunk(chunks[keyword], keyword)
        except InvalidInput:
            if keyword == "ccv3" and "chara" in chunks:
                notes.append("the PNG's 'ccv3' chunk is damaged; read the 'chara' chunk instead")
                continue
            raise
        doc = require_object(doc, f"the PNG's {keyword!r} chunk")
        return keyword, doc, notes
    raise InvalidInput(
        "The PNG has no character card in it (no 'chara' or 'ccv3' text chunk). "
        "Export the card again from the app that made it."
    )


def _safe_name(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return not (name.startswith(("/", "\\")) or ":" in parts[0] or ".." in parts)


def read_charx(data: bytes, max_bytes: int) -> dict[str, Any]:
    """``card.json`` from a CHARX zip, refusing bombs and unsafe member names."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        raise InvalidInput(f"The file looks like a zip (CHARX) but cannot be read: {exc}.") from exc
    if len(members) > ZIP_MAX_MEMBERS:
        raise InvalidInput(
            f"The CHARX archive has {len(members)} files; at most {ZIP_MAX_MEMBERS}."
        )
    unsafe = [m.filename for m in members if not _safe_name(m.filename)]
    if unsafe:
        raise InvalidInput(
            f"The CHARX archive has unsafe file names (e.g. {unsafe[0]!r}); refused."
        )
    card = next((m for m in members if m.filename == "card.json"), None)
    if card is None:
        raise InvalidInput("The zip has no card.json at its root, so it is not a CHARX card.")
    if card.flag_bits & 0x1:
        raise InvalidInput("The CHARX card.json is encrypted; export it without a password.")
    ratio_cap = max(card.compress_size, 1) * ZIP_MAX_RATIO
    if card.file_size > max_bytes or card.file_size > ratio_cap:
        raise PayloadTooLarge(
            limit="CHARX card.json",
            allowed=f"at most {max_bytes:,} bytes and {ZIP_MAX_RATIO}x its compressed size",
            actual=f"{card.file_size:,} bytes declared",
        )
    try:
        with archive.open(card) as handle:
            body = handle.read(min(max_bytes, ratio_cap) + 1)  # never trust the declared size
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError) as exc:
        raise InvalidInput(f"The CHARX card.json cannot be read: {exc}.") from exc
    except (zlib.error, lzma.LZMAError) as exc:  # bz2 errors are OSError, caught above
        raise InvalidInput(f"The CHARX card.json is corrupt: {exc}.") from exc
    if len(body) > min(max_bytes, ratio_cap):
        raise PayloadTooLarge(
            limit="CHARX card.json",
            allowed=f"at most {min(max_bytes, ratio_cap):,} bytes",
            actual="more than that when decompressed",
        )
    return require_object(load_json(decode_text(body), "The CHARX card.json"), "card.json")
