"""Turn an answer's ``how_to_run`` into an argv that is safe to execute, or refuse it.

The text comes from the agent, so it is split with :mod:`shlex` and never given
to a shell.  Only one form is accepted::

    <python interpreter> <workspace .py file> [plain arguments]

The interpreter is only recognised (its last path component must be ``python``,
``python3`` or ``python3.X``) and is later replaced by the auditor's chosen
interpreter; the agent's path usually does not exist here.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath

# Refused anywhere in the text, quoted or not: with no shell these would be
# inert, but an answer that contains them was written for a shell, and quoting
# tricks are exactly how injections hide.
SHELL_METACHARACTERS = frozenset(";|&$><`\n\r\x00")
INTERPRETER_NAME = re.compile(r"python(3(\.\d+)?)?")
# A plain argument: an option, a number, a word, a relative path.  No spaces
# survive shlex, no globbing or expansion characters are needed.
PLAIN_ARGUMENT = re.compile(r"[A-Za-z0-9_.,:=+@%/-]+")
MAX_ARGUMENTS = 64


class CommandRefused(ValueError):
    """``how_to_run`` is not of the accepted form; the message says why."""


@dataclass(frozen=True)
class Command:
    interpreter: str  # as written in the answer (informational only)
    script: str  # normalised relative path inside the workspace
    args: tuple[str, ...]

    def argv(self, python: str) -> list[str]:
        """The argv to execute with ``python`` in place of the agent's interpreter."""
        return [python, self.script, *self.args]


def parse_how_to_run(text: object) -> Command:
    """Parse ``how_to_run``; raises :class:`CommandRefused` for anything but the accepted form."""
    if not isinstance(text, str) or not text.strip():
        raise CommandRefused("how_to_run is empty or not a string")
    bad = sorted({c for c in text if c in SHELL_METACHARACTERS})
    if bad:
        raise CommandRefused(f"how_to_run contains shell syntax {''.join(bad)!r}; it is never run through a shell")
    try:
        tokens = shlex.split(text)
    except ValueError as exc:  # unbalanced quotes
        raise CommandRefused(f"how_to_run cannot be split into words: {exc}") from None
    if len(tokens) < 2:
        raise CommandRefused("how_to_run must be a Python interpreter followed by a .py script")
    interpreter, script, *args = tokens
    _check_interpreter(interpreter)
    if script.startswith("-"):
        raise CommandRefused(f"interpreter option {script!r} refused: only '<python> <script.py> [args]' is run")
    if len(args) > MAX_ARGUMENTS:
        raise CommandRefused(f"{len(args)} arguments; at most {MAX_ARGUMENTS} are accepted")
    for arg in args:
        _check_argument(arg)
    return Command(interpreter=interpreter, script=relative_name(script, what="script"), args=tuple(args))


def _check_interpreter(token: str) -> None:
    name = PurePosixPath(token).name
    if not INTERPRETER_NAME.fullmatch(name):
        raise CommandRefused(f"{token!r} is not a Python interpreter; only python, python3 or python3.X is run")


def _check_argument(arg: str) -> None:
    if not PLAIN_ARGUMENT.fullmatch(arg):
        raise CommandRefused(f"argument {arg!r} is not a plain word, number, option or relative path")
    path_part = arg.split("=", 1)[-1]
    if path_part.startswith("/") or ".." in PurePosixPath(path_part).parts:
        raise CommandRefused(f"argument {arg!r} points outside the workspace")


def relative_name(name: object, *, what: str = "file") -> str:
    """Validate a workspace-relative file name and return it normalised.

    Refuses absolute names, ``..`` components, empty names and NUL bytes;
    symlinks are checked later, against the real workspace.
    """
    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise CommandRefused(f"{what} name {name!r} is not a file name")
    path = PurePosixPath(name)
    if path.is_absolute() or name.startswith("~"):
        raise CommandRefused(f"{what} {name!r} is absolute; names must be relative to the workspace")
    if ".." in path.parts:
        raise CommandRefused(f"{what} {name!r} contains '..'; names must stay inside the workspace")
    if what == "script" and path.suffix != ".py":
        raise CommandRefused(f"script {name!r} is not a .py file")
    normalised = str(path)
    if normalised in ("", "."):
        raise CommandRefused(f"{what} name {name!r} is not a file name")
    return normalised
