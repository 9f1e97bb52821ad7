"""What is sent is what is charged, through HTTP (DESIGN §2 budget table): a named entry cut
to what is left of the per-turn budget reaches the model cut, in ``/v1/select`` and in
``/v1/preview``, and a preview without names shows the stand-in names on every path."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.sent_lore import CHRONICLE_MESSAGE, check_sent_equals_charged, chronicle_entries

H = dict[str, str]


def _chronicle(client: TestClient, headers: H) -> str:
    made = client.post("/v1/books", json={"title": "Chronicles"}, headers=headers).json()
    body = {"entries": chronicle_entries()}
    added = client.post(f"/v1/books/{made['id']}/entries/batch", json=body, headers=headers)
    assert added.status_code == 201, added.text
    return str(made["id"])


def _cut_chronicle(answer: dict) -> dict:  # type: ignore[type-arg]
    check_sent_equals_charged(answer)
    [chronicle] = [e for e in answer["injected"] if e["title"] == "The Long Chronicle"]
    assert chronicle["via"] == "literal" and chronicle["truncated"]
    assert (
        chronicle["cost"] < chronicle["tokens"] and chronicle["cost"] <= answer["per_turn_budget"]
    )
    assert chronicle["text"] in answer["messages"][-1]["content"]
    return chronicle  # type: ignore[no-any-return]


def test_select_sends_the_cut_it_charges(client: TestClient, alice: H) -> None:
    book = _chronicle(client, alice)
    turn = {
        "book_ids": [book],
        "input_window": 8192,
        "user_name": "Ari",
        "characters": [{"id": "sakana", "name": "Sakana"}],
        "messages": [{"role": "user", "content": CHRONICLE_MESSAGE}],
    }
    answer = client.post("/v1/select", json=turn, headers=alice)
    assert answer.status_code == 200, answer.text
    chronicle = _cut_chronicle(answer.json())
    assert "Ari watched Sakana" in chronicle["text"]
    looked_up = client.post(
        "/v1/lookup",
        json={
            **{k: turn[k] for k in ("book_ids", "user_name", "characters")},
            "title": "The Long Chronicle",
        },
        headers=alice,
    ).json()
    assert looked_up["lore"].startswith(chronicle["text"])


def test_preview_without_names_shows_stand_ins_everywhere(client: TestClient, alice: H) -> None:
    book = _chronicle(client, alice)
    turn = {"book_ids": [book], "input_window": 8192, "message": CHRONICLE_MESSAGE}
    answer = client.post("/v1/preview", json=turn, headers=alice)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    chronicle = _cut_chronicle(body)
    assert "User watched Character" in chronicle["text"]
    # The world index is made from the same filled lore as the full text (a wider window
    # leaves room for index lines).
    wide = client.post("/v1/preview", json={**turn, "input_window": 32768}, headers=alice)
    body = wide.json()
    check_sent_equals_charged(body)
    assert body["index"] and all("{{" not in line["line"] for line in body["index"])
    assert any(
        line["line"].startswith("Town") and "User once slept" in line["line"]
        for line in body["index"]
    )
    assert "{{" not in "".join(m["content"] for m in body["messages"])
    assert any(
        "preview shows {{char}} as 'Character', {{user}} as 'User'" in n for n in body["notes"]
    )
