"""What every CLI command shares: settings, services, output and error handling."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import typer

from worldbook.cli.errors import cli_message, exit_code
from worldbook.errors import WorldbookError
from worldbook.service.components import Components
from worldbook.service.services import Services
from worldbook.settings import WorldbookSettings

P = ParamSpec("P")
R = TypeVar("R")


def handle_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn a WorldbookError into its one-line message on stderr and its exit code."""

    @wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except WorldbookError as error:
            typer.echo(cli_message(error), err=True)
            raise typer.Exit(exit_code(error)) from None

    return wrapper


def settings() -> WorldbookSettings:
    """Settings from the environment — built here, at the entry point, never at import."""
    return WorldbookSettings()


@contextmanager
def open_services(*, start_queue: bool = False) -> Iterator[Services]:
    """The services of one command; the CLI indexes explicitly (``worldbook index``), so the
    in-process indexer thread is not started unless asked. The CLI is the operator's tool, so
    it may name tokenizer files by path (``--tokenizer hf:/path/tokenizer.json``)."""
    parts = Components(settings(), start_queue=start_queue, trusted=True)
    try:
        yield parts.services
    finally:
        parts.close()


def emit_json(value: Any) -> None:
    typer.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def show_progress() -> bool:
    return sys.stderr.isatty()
