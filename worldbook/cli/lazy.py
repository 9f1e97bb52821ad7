"""Commands that are imported only when they run (ADR 0019).

``worldbook --help`` lists every command from one line of help each, written beside its
registration, and imports none of them: a command's module (and the service wiring, the models
and the benchmarks behind it) loads when that command, or its own ``--help``, is asked for.
A command is a function (a Typer command) or a ``typer.Typer`` (a group of commands)::

    LazyCommand("db", "worldbook.cli.db:db_app", "Database migrations and checks.")

Only Typer and Click are imported here; the list's help is plain text, because Rich alone
loads more modules than the whole budget of ``--help`` (ADR 0019). A command's own help keeps
Typer's Rich rendering, since its module is loaded by then anyway.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
import typer.core
import typer.main
import typer.models

# Typer vendors Click (``typer._click``); its groups take that Click's contexts and formatters.
from typer import _click as click


@dataclass(frozen=True)
class LazyCommand:
    """One command of a lazy group: its name, ``module:attribute`` and its one-line help."""

    name: str
    target: str
    help: str

    def load(self) -> click.Command:
        """Import the target and build the Click command Typer would have built for it."""
        module, _, attribute = self.target.partition(":")
        value: Any = getattr(importlib.import_module(module), attribute)
        mode = typer.core.DEFAULT_MARKUP_MODE
        if isinstance(value, typer.Typer):
            info = typer.models.TyperInfo(value, name=self.name)
            return typer.main.get_group_from_info(
                info, pretty_exceptions_short=True, suggest_commands=True, rich_markup_mode=mode
            )
        info_ = typer.models.CommandInfo(name=self.name, callback=value)
        return typer.main.get_command_from_info(
            info_, pretty_exceptions_short=True, rich_markup_mode=mode
        )


class LazyGroup(typer.core.TyperGroup):
    """A Typer group whose commands are :class:`LazyCommand` entries, loaded on first use."""

    lazy: ClassVar[dict[str, LazyCommand]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *(n for n in super().list_commands(ctx) if n not in self.lazy)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.commands[cmd_name] = self.lazy[cmd_name].load()
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from the registered one-line helps, importing nothing."""
        rows = [(name, self._short_help(ctx, name)) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def _short_help(self, ctx: click.Context, name: str) -> str:
        if name in self.lazy:
            return self.lazy[name].help
        command = self.get_command(ctx, name)  # registered eagerly: already imported
        return command.get_short_help_str() if command else ""


def lazy_group(commands: Sequence[LazyCommand]) -> type[LazyGroup]:
    """A :class:`LazyGroup` class holding ``commands`` (in the order ``--help`` lists them)."""
    names = [c.name for c in commands]
    if len(set(names)) != len(names):
        raise ValueError(f"a command name is registered twice: {names}")
    return type("WorldbookGroup", (LazyGroup,), {"lazy": {c.name: c for c in commands}})
