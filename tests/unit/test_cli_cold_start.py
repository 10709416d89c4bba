"""``auditor --help`` starts cold in a fraction of a second: it lists the commands from
``auditor.cli.COMMANDS`` and imports no command module, so none of the heavy libraries a
command needs when it runs (SQLAlchemy, NumPy, pyarrow, FastAPI)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import auditor.cli
from auditor.cli import COMMANDS, load_module_commands

# httpx: auditor.client, which the read commands use only with --url, is not loaded either.
HEAVY = ("sqlalchemy", "numpy", "pyarrow", "fastapi", "psycopg", "matplotlib", "httpx")


def _modules_after(*args: str) -> tuple[int, set[str]]:
    code = (
        "import sys\n"
        "from auditor.cli import main\n"
        f"sys.argv = ['auditor', *{list(args)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as done:\n"
        "    code = done.code\n"
        "print(code, *sorted({name.split('.')[0] for name in sys.modules}), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    last = done.stderr.strip().splitlines()[-1].split()
    return int(last[0]), set(last[1:])


@pytest.mark.parametrize(
    "args",
    [("--help",), (), ("no-such-command",), ("--url", "http://127.0.0.1:9", "--help")],
)
def test_help_and_usage_errors_import_no_heavy_library(args: tuple[str, ...]) -> None:
    code, modules = _modules_after(*args)
    assert code in (0, 2)
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))


def _command_modules() -> list[str]:
    found = pkgutil.iter_modules(auditor.cli.__path__)
    return sorted(m.name for m in found if not m.name.startswith("_"))


def test_the_command_table_lists_what_each_module_registers() -> None:
    registered = {
        name: module for module in _command_modules() for name in load_module_commands(module)
    }
    assert registered == {name: module for name, (module, _) in COMMANDS.items()}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_help_is_the_commands_own(name: str) -> None:
    module, listed = COMMANDS[name]
    own = load_module_commands(module)[name].help or ""
    assert listed == " ".join(own.split("\n\n")[0].split())
