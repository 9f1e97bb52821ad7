"""``worldbook --help`` imports almost nothing, and every command still loads (ADR 0019).

The command list is drawn from the one-line helps registered in ``worldbook.cli.main``; a
command's module is imported only when that command runs or shows its own help. The budget is
counted in modules, not seconds: a count does not depend on how busy the machine is.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from worldbook.cli.lazy import LazyCommand, lazy_group
from worldbook.cli.main import COMMANDS, app

MODULE_BUDGET = 200

_COUNT = """
import json, sys
sys.argv = ["worldbook", *json.loads(sys.argv[1])]
from worldbook.cli.main import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _modules_after(*args: str) -> tuple[str, list[str]]:
    """Run ``worldbook *args`` in a fresh interpreter: what it printed (either stream) and the
    modules it had loaded when it was done."""
    done = subprocess.run(
        [sys.executable, "-c", _COUNT, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    *err, modules = done.stderr.strip().splitlines()
    return done.stdout + "\n".join(err), json.loads(modules)


def test_help_lists_every_command_under_the_module_budget() -> None:
    out, modules = _modules_after("--help")
    assert len(modules) < MODULE_BUDGET, len(modules)
    for command in COMMANDS:
        assert command.name in out and command.help in out
    # the service wiring, the settings, the models and the benchmarks are not loaded
    heavy = ("worldbook.service", "worldbook.bench", "worldbook.settings", "pydantic", "numpy")
    assert not [m for m in modules if m.startswith(heavy)]


def test_no_arguments_shows_the_same_list_cheaply() -> None:
    out, modules = _modules_after()
    assert len(modules) < MODULE_BUDGET and "Commands" in out


def test_a_command_loads_its_module_only_when_asked() -> None:
    _, modules = _modules_after("bench", "--help")
    assert "worldbook.cli.bench" in modules
    assert "worldbook.cli.selection" not in modules


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_command_help_still_works(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output and command in result.output


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["no-such-command"])
    assert result.exit_code == 2
    assert "No such command" in result.output


def test_a_name_registered_twice_is_refused() -> None:
    twice = [LazyCommand("x", "worldbook.cli.serve:serve_command", "one")] * 2
    with pytest.raises(ValueError, match="registered twice"):
        lazy_group(twice)
