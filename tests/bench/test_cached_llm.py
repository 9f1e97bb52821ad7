"""The hard sets' memoised model (ADR 0023): a request seen is answered from the file, a reply
cut at the output limit is replayed as the same error, and a new process reads what was saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.llm_fakes import ScriptedLLM, lore_request
from worldbook.bench.glosses import CachedLLM
from worldbook.errors import LLMTruncated


def test_a_request_seen_is_not_asked_again_even_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "memo.json"
    inner = ScriptedLLM([{"glosses": []}, LLMTruncated("cut", partial='{"glosses": [')])
    memo = CachedLLM(inner, path)
    first = memo.complete(lore_request({"type": "object"}, "one"))
    assert memo.complete(lore_request({"type": "object"}, "one")).data == first.data
    for _ in range(2):
        with pytest.raises(LLMTruncated) as cut:
            memo.complete(lore_request({"type": "object"}, "two"))
        assert cut.value.partial == '{"glosses": ['
    assert memo.asked == 2 and len(inner.requests) == 2
    memo.save()
    again = CachedLLM(ScriptedLLM([]), path)  # would fail if it asked
    assert again.complete(lore_request({"type": "object"}, "one")).data == {"glosses": []}
    with pytest.raises(LLMTruncated):
        again.complete(lore_request({"type": "object"}, "two"))
