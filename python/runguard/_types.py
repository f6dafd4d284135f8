# SPDX-License-Identifier: LGPL-2.1-or-later
"""Enumerations and exceptions of the runguard binding (re-exported by
the package; the C extension raises these)."""

from __future__ import annotations

import enum
import logging
import typing

if typing.TYPE_CHECKING:
    from ._runguard import Result


class Outcome(enum.IntEnum):
    """How a run ended (enum rg_outcome)."""

    #: nothing ran, or it cannot be described (raised as Error)
    ERROR = -1
    #: the command ran to completion, whatever its exit status
    COMPLETED = 0
    #: execve() failed (Result.exec_errno): the submission's fault
    EXEC_FAILED = 1
    #: the child's set-up before exec failed (raised as SetupError)
    SETUP_FAILED = 2
    #: the command ran, its leftovers could not be cleaned up (CleanupError)
    CLEANUP_FAILED = 3


class Limit(enum.IntFlag):
    """Which time limit a run hit (Result.wall_limit, Result.cpu_limit)."""

    NONE = 0
    SOFT = 1
    HARD = 2


class SlotState(enum.IntEnum):
    """State of a pool slot (SlotInfo.state)."""

    FREE = 0
    HELD = 1
    #: its holder died during a run; the next holder cleans it
    DIRTY = 2


class LogLevel(enum.IntEnum):
    """Importance of a librunguard message (enum rg_log_level): a sink
    gets the messages up to its level."""

    ERROR = 0
    WARNING = 1
    #: what a run or a pool call is doing (-v of the CLI)
    NOTICE = 2
    DEBUG = 3

    @property
    def logging_level(self) -> int:
        """The matching level of the logging module (NOTICE: INFO)."""
        return (logging.ERROR, logging.WARNING, logging.INFO,
                logging.DEBUG)[self]


#: a log sink: called with each message and its level
LogCallback = typing.Callable[[LogLevel, str], object]


def log_to_logger(logger: logging.Logger) -> LogCallback:
    """A sink (Config(log=...), set_log()) that passes each message to
    logger at the matching level."""
    def sink(level: LogLevel, message: str) -> None:
        logger.log(level.logging_level, '%s', message)
    return sink


class Error(OSError):
    """librunguard failed: errno is the error number (None when none
    applies), strerror the library's message.  Raised for Outcome.ERROR
    and by the pool functions."""


class ConfigError(Error, ValueError):
    """A configuration value the library refuses (its setter's message)."""


class RunError(Error):
    """A run that has a result but no verdict: the result is in .result
    (None only for a Cancelled run that never got its slot)."""

    result: Result | None

    def __init__(self, *args: object, result: Result | None = None) -> None:
        super().__init__(*args)
        self.result = result


class SetupError(RunError):
    """Outcome.SETUP_FAILED: the child's set-up before exec failed (a host
    problem, e.g. the working directory is missing); .result has exit code
    255, times and memory."""


class CleanupError(RunError):
    """Outcome.CLEANUP_FAILED: the command ran (.result describes the whole
    run) but what it left could not be cleaned up: the host needs a look."""


class Cancelled(RunError):
    """The run was cancelled (Pool.cancel(), cancel_all()) and killed before
    it ended on its own; .result describes it up to then, None when it was
    still waiting for a free slot."""


# shown as runguard.X in tracebacks and reprs, where users find them
for _cls in (Outcome, Limit, SlotState, LogLevel, Error, ConfigError, RunError,
             SetupError, CleanupError, Cancelled):
    _cls.__module__ = 'runguard'
del _cls
log_to_logger.__module__ = 'runguard'
