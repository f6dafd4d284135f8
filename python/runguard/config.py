# SPDX-License-Identifier: LGPL-2.1-or-later
"""runguard.Config: what to run and under which limits."""

from __future__ import annotations

import grp
import os
import pwd
import typing
from collections.abc import Iterable, Mapping, Sequence

from . import _runguard
from ._types import ConfigError, LogCallback, LogLevel

StrPath = typing.Union[str, bytes, 'os.PathLike[str]', 'os.PathLike[bytes]']


class _HasFileno(typing.Protocol):
    def fileno(self) -> int: ...


#: stdin, stdout, stderr: a path, a file descriptor or a file object
Stream = typing.Union[StrPath, int, _HasFileno]
#: wall_limit, cpu_limit: seconds, or (soft, hard)
TimeLimit = typing.Union[float, typing.Tuple[float, float]]

_FIELDS = ('command', 'executable', 'root', 'root_prefix', 'workdir', 'user',
           'group', 'wall_limit', 'cpu_limit', 'memory_limit', 'file_limit',
           'process_limit', 'cpuset', 'core_dumps', 'stdin', 'stdout',
           'stderr', 'stream_limit', 'environment', 'keep_environment',
           'syscall_filter', 'kill_grace', 'cgroup_parent',
           'timeout_notify_pid', 'pool_keeper', 'pool_v2_memory_peak', 'log',
           'log_level')


def _path(value: StrPath | None) -> str | bytes | None:
    return None if value is None else os.fspath(value)


def _stream(name: str, value: Stream | None
            ) -> str | bytes | int | _HasFileno | None:
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fspath(value)
    if hasattr(value, 'fileno'):
        # kept, not its fd: the object stays open while the Config lives
        return value
    raise TypeError('%s: expected a path, a file descriptor or a file '
                    'object, not %s' % (name, type(value).__name__))


def _limit(name: str, value: TimeLimit | None) -> tuple[float, float] | None:
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return (float(value), float(value))
    soft, hard = value
    return (float(soft), float(hard))


def _count(name: str, value: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError('%s: expected an int, not %s'
                        % (name, type(value).__name__))
    if value < 0:
        raise ConfigError('%s must not be negative' % name)
    return value


def _account(name: str, value: str | int | None,
             lookup: typing.Callable[[str], typing.Any]) -> int | None:
    if value is None or isinstance(value, int):
        return value
    try:
        return int(lookup(value)[2])
    except KeyError:
        raise ConfigError('no %s named %r' % (name, value)) from None


def _environment(value: Mapping[str, str | None] | Iterable[str] | None
                 ) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return tuple(k if v is None else '%s=%s' % (k, v)
                     for k, v in value.items())
    if isinstance(value, str):
        raise TypeError('environment: expected a mapping or assignments, '
                        'not a str')
    return tuple(value)


def _cpuset(value: str | Iterable[int] | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return ','.join(str(int(c)) for c in value)


def _log(value: LogCallback | None) -> LogCallback | None:
    if value is not None and not callable(value):
        raise TypeError('log: expected a callable, not %s'
                        % type(value).__name__)
    return value


def _log_level(value: LogLevel | int) -> LogLevel:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError('log_level: expected a LogLevel, not %s'
                        % type(value).__name__)
    try:
        return LogLevel(value)
    except ValueError:
        raise ConfigError('log_level: %d is not a LogLevel' % value) from None


class Config:
    """What to run and under which limits: immutable, so one Config may
    serve many runs at once (each run builds its own librunguard
    configuration from it); derive variants with replace().

    Every argument but command is keyword-only and maps to one
    rg_config_set_*() call; None leaves the library's default.  Values the
    library refuses raise ConfigError (a ValueError) with its message.
    """

    __slots__ = _FIELDS

    command: tuple[str | bytes, ...]
    executable: str | bytes | None
    root: str | bytes | None
    root_prefix: str | bytes | None
    workdir: str | bytes | None
    user: int | None
    group: int | None
    wall_limit: tuple[float, float] | None
    cpu_limit: tuple[float, float] | None
    memory_limit: int | None
    file_limit: int | None
    process_limit: int | None
    cpuset: str | None
    core_dumps: bool
    stdin: str | bytes | int | _HasFileno | None
    stdout: str | bytes | int | _HasFileno | None
    stderr: str | bytes | int | _HasFileno | None
    stream_limit: int | None
    environment: tuple[str, ...]
    keep_environment: bool
    syscall_filter: bool
    kill_grace: float | None
    cgroup_parent: str | None
    timeout_notify_pid: int | None
    pool_keeper: bool
    pool_v2_memory_peak: str
    log: LogCallback | None
    log_level: LogLevel

    def __init__(self, command: Sequence[StrPath], *,
                 executable: StrPath | None = None,
                 root: StrPath | None = None,
                 root_prefix: StrPath | None = None,
                 workdir: StrPath | None = None,
                 user: str | int | None = None,
                 group: str | int | None = None,
                 wall_limit: TimeLimit | None = None,
                 cpu_limit: TimeLimit | None = None,
                 memory_limit: int | None = None,
                 file_limit: int | None = None,
                 process_limit: int | None = None,
                 cpuset: str | Iterable[int] | None = None,
                 core_dumps: bool = False,
                 stdin: Stream | None = None,
                 stdout: Stream | None = None,
                 stderr: Stream | None = None,
                 stream_limit: int | None = None,
                 environment: Mapping[str, str | None] | Iterable[str]
                 | None = None,
                 keep_environment: bool = False,
                 syscall_filter: bool = True,
                 kill_grace: float | None = None,
                 cgroup_parent: str | None = None,
                 timeout_notify_pid: int | None = None,
                 pool_keeper: bool = True,
                 pool_v2_memory_peak: str = 'sampled',
                 log: LogCallback | None = None,
                 log_level: LogLevel | int = LogLevel.WARNING) -> None:
        """command: argv (str, bytes or path-like), looked up like execvp()
        with the child's PATH unless executable names the file.
        root: chroot into it (below root_prefix if given); workdir: the
        working directory inside the root.  user, group: name or id (the
        command never runs as root; without a user it runs with the
        caller's real uid).  wall_limit, cpu_limit: seconds, or (soft,
        hard).  memory_limit (RAM + swap), file_limit, stream_limit: bytes;
        process_limit: RLIMIT_NPROC.  cpuset: "0,2-3" or CPU numbers.
        stdin: a path (opened read-only when the run starts), a file
        descriptor or a file object (used, not closed; default: the
        caller's stdin).  stdout, stderr: a path (created, mode 0600), a
        file descriptor or a file object (default: the caller's).
        environment: {NAME: value or None (unset)} or "NAME=VALUE"/"NAME"
        strings, applied to the reset environment (only PATH kept, unless
        keep_environment).  kill_grace: seconds between SIGTERM and SIGKILL
        when a run is aborted.  pool_keeper, pool_v2_memory_peak ("sampled"
        or "exact"): for runs through a Pool (see docs/pool.md).
        log: called as log(level, message) with the run's messages up to
        log_level (a LogLevel), from the thread doing the run (the
        caller's; for a run from the main thread, a helper thread of the
        binding); an exception it raises is reported (sys.unraisablehook)
        and the run goes on.
        log_to_logger(logger) makes one for the logging module.
        """
        if isinstance(command, (str, bytes)):
            raise TypeError('command: expected a sequence of arguments, '
                            'not a string')
        values: dict[str, typing.Any] = {
            'command': tuple(os.fspath(a) for a in command),
            'executable': _path(executable),
            'root': _path(root),
            'root_prefix': _path(root_prefix),
            'workdir': _path(workdir),
            'user': _account('user', user, pwd.getpwnam),
            'group': _account('group', group, grp.getgrnam),
            'wall_limit': _limit('wall_limit', wall_limit),
            'cpu_limit': _limit('cpu_limit', cpu_limit),
            'memory_limit': _count('memory_limit', memory_limit),
            'file_limit': _count('file_limit', file_limit),
            'process_limit': _count('process_limit', process_limit),
            'cpuset': _cpuset(cpuset),
            'core_dumps': bool(core_dumps),
            'stdin': _stream('stdin', stdin),
            'stdout': _stream('stdout', stdout),
            'stderr': _stream('stderr', stderr),
            'stream_limit': _count('stream_limit', stream_limit),
            'environment': _environment(environment),
            'keep_environment': bool(keep_environment),
            'syscall_filter': bool(syscall_filter),
            'kill_grace': None if kill_grace is None else float(kill_grace),
            'cgroup_parent': cgroup_parent,
            'timeout_notify_pid': timeout_notify_pid,
            'pool_keeper': bool(pool_keeper),
            'pool_v2_memory_peak': pool_v2_memory_peak,
            'log': _log(log),
            'log_level': _log_level(log_level),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)
        # the library's own checks, with its messages
        _runguard.check_config(self)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError('Config is immutable: use replace()')

    def __delattr__(self, name: str) -> None:
        raise AttributeError('Config is immutable: use replace()')

    def replace(self, **changes: typing.Any) -> Config:
        """A new Config with these arguments changed (checked again)."""
        unknown = set(changes) - set(_FIELDS)
        if unknown:
            raise TypeError('unknown Config argument(s): %s'
                            % ', '.join(sorted(unknown)))
        args = {name: getattr(self, name) for name in _FIELDS}
        args.update(changes)
        return Config(args.pop('command'), **args)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Config):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in _FIELDS)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in _FIELDS))

    def __repr__(self) -> str:
        args = [repr(list(self.command))]
        for name in _FIELDS[1:]:
            value = getattr(self, name)
            default = _DEFAULTS.get(name)
            if value != default:
                args.append('%s=%r' % (name, value))
        return 'Config(%s)' % ', '.join(args)


_DEFAULTS: dict[str, typing.Any] = {
    'core_dumps': False, 'environment': (), 'keep_environment': False,
    'syscall_filter': True, 'pool_keeper': True,
    'pool_v2_memory_peak': 'sampled', 'log': None,
    'log_level': LogLevel.WARNING,
}
