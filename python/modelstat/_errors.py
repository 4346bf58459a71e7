"""modelstat's exceptions: one class per error kind of the command line.

Every error the library raises is a :class:`Error`; its message is what the
command line prints after ``modelstat: error:``, and ``exit_code`` is the exit
code the command line returns for it (2 for bad usage, bad input or a model
this machine cannot run; 1 for a runtime failure).
"""


class Error(Exception):
    """A modelstat error: ``message``, ``kind``, ``exit_code``, and where known ``file``, ``node``, ``op``."""

    kind = "runtime"
    exit_code = 1

    def __init__(self, message, file="", node="", op=""):
        super().__init__(message)
        self.message = message
        self.file = file
        self.node = node
        self.op = op


class UsageError(Error, ValueError):
    """Bad arguments (an unknown option, a malformed value): exit code 2."""

    kind = "usage"
    exit_code = 2


class InputError(Error, ValueError):
    """The model or a file it names is invalid: exit code 2."""

    kind = "input"
    exit_code = 2


class CannotRunError(Error):
    """A valid model this executor or machine cannot run (no kernel, not enough memory): exit code 2."""

    kind = "cannot_run"
    exit_code = 2


class RuntimeFailure(Error, RuntimeError):
    """Something failed while running (a report file that cannot be written): exit code 1."""

    kind = "runtime"
    exit_code = 1


_BY_KIND = {c.kind: c for c in (UsageError, InputError, CannotRunError, RuntimeFailure)}


def make_error(kind, message, file="", node="", op=""):
    """The exception for a C++ modelstat::Error (called by the extension modules)."""
    return _BY_KIND.get(kind, RuntimeFailure)(message, file, node, op)
