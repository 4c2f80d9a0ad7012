"""A worker locks itself down before it reads any code: resource limits, prctl, and the
system-call filter the host compiled (`app/sandbox/seccomp.py`), with the listener its
supervisor answers refused calls on. Needs only libc.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import platform
import resource
import select
import struct

# <linux/prctl.h>, <linux/seccomp.h>
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
SECCOMP_FILTER_FLAG_TSYNC_ESRCH = 1 << 4
SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}
BPF_INSTRUCTION_BYTES = 8
# _IOWR('!', 0, struct seccomp_notif) and _IOWR('!', 1, struct seccomp_notif_resp)
NOTIF_BYTES = 80  # id u64, pid u32, flags u32, seccomp_data (nr i32, arch u32, ip u64, args 6 u64)
NOTIF_RESP = struct.Struct("=QqiI")  # id, val, error, flags
IOCTL_NOTIF_RECV = (3 << 30) | (NOTIF_BYTES << 16) | (ord("!") << 8) | 0
IOCTL_NOTIF_SEND = (3 << 30) | (NOTIF_RESP.size << 16) | (ord("!") << 8) | 1
MAX_RECORDED = 100  # refused calls kept between two takes


class SeccompUnavailable(RuntimeError):
    """The filter cannot be installed here; the message says why."""


# <linux/prctl.h>
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4


def prctl(option: int, value: int) -> None:
    """prctl(2) on the calling process (the worker and the fork server set their own).

    Raises:
        OSError: The kernel refused it.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"prctl {option}: {os.strerror(number)}")


def apply_rlimits(
    *,
    memory_mb: int,
    cpu_seconds: int,
    file_size_mb: int,
    max_processes: int,
    own_user_namespace: bool,
) -> None:
    """Limit the calling process (the worker calls this first thing, before any import).

    Soft and hard limits are both lowered, so code in the worker cannot raise them again.

    Args:
        memory_mb: RLIMIT_AS in MB.
        cpu_seconds: RLIMIT_CPU; the kernel sends SIGXCPU when it is used up.
        file_size_mb: RLIMIT_FSIZE in MB.
        max_processes: RLIMIT_NPROC (processes and threads).
        own_user_namespace: Whether the worker has its own user namespace. Without one the
            kernel counts every process of the backend's user, so the limit is set that
            many above the current count.
    """
    mb = 1 << 20
    _lower(resource.RLIMIT_AS, memory_mb * mb)
    # The hard limit a little higher: SIGXCPU at the soft limit, SIGKILL at the hard one.
    _lower(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 5)
    _lower(resource.RLIMIT_FSIZE, file_size_mb * mb)
    # A core file of a crashed worker would land in the user's workspace.
    _lower(resource.RLIMIT_CORE, 0)
    existing = 0 if own_user_namespace else _tasks_of_user(os.getuid())
    _lower(resource.RLIMIT_NPROC, existing + max_processes)


def _lower(which: int, soft: int, hard: int | None = None) -> None:
    hard = soft if hard is None else hard
    current_hard = resource.getrlimit(which)[1]
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def _tasks_of_user(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                count += len(os.listdir(f"{entry.path}/task"))
        except OSError:
            continue
    return count


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(program: bytes, *, listener: bool = False) -> int | None:
    """Install a program of the filter on every thread of the calling process (irreversible).

    Args:
        program: SeccompFilter.quiet or SeccompFilter.reporting.
        listener: Ask for the listener its reported calls go to (SeccompFilter.reporting).

    Returns:
        The listener's descriptor when one was asked for, else None.

    Raises:
        SeccompUnavailable: The kernel refused it (for a listener: perhaps it has none, as
            before Linux 5.7; install SeccompFilter.quiet then).
    """
    arch = platform.machine()
    number = SECCOMP_SYSCALL.get(arch)
    if number is None:
        raise SeccompUnavailable(f"no seccomp system call number known for {arch}")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SeccompUnavailable(f"PR_SET_NO_NEW_PRIVS failed: {os.strerror(ctypes.get_errno())}")
    instructions = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // BPF_INSTRUCTION_BYTES, ctypes.addressof(instructions))
    flags = SECCOMP_FILTER_FLAG_TSYNC
    if listener:
        # With a listener the call returns its descriptor, so a thread out of sync is told
        # by ESRCH instead of by its id.
        flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC_ESRCH
    libc.syscall.restype = ctypes.c_long
    done = libc.syscall(
        ctypes.c_long(number),
        ctypes.c_long(SECCOMP_SET_MODE_FILTER),
        ctypes.c_long(flags),
        ctypes.byref(fprog),
    )
    if done < 0 or (done > 0 and not listener):
        reason = os.strerror(ctypes.get_errno()) if done < 0 else f"thread {done} out of sync"
        raise SeccompUnavailable(f"the kernel refused the system-call filter: {reason}")
    return int(done) if listener else None


class Listener:
    """The supervisor's side of the reporting program: records each refused call the
    runner (or any of its threads) makes and answers it with the call's error number.

    The supervisor answers whenever the listener is readable while it waits for the
    runner, and once more after it stopped the runner: a refused call does not return
    until it is answered, so each is recorded before anything that follows it.
    """

    def __init__(self, fd: int, calls: dict[int, tuple[str, int]]) -> None:
        """Take the listener.

        Args:
            fd: The listener's descriptor (from install(..., listener=True) in the runner).
            calls: SeccompFilter.calls.
        """
        self.fd = fd
        self.calls = calls
        self._seen: list[str] = []

    def take(self) -> list[str]:
        """What was refused since the last call, in order, once each."""
        seen, self._seen = self._seen, []
        return list(dict.fromkeys(seen))

    def answer_pending(self) -> None:
        """Record and answer every refused call waiting now (does not block)."""
        while select.select([self.fd], [], [], 0)[0]:
            if not self.answer():
                return

    def answer(self) -> bool:
        """Record and answer one refused call; call it when the listener is readable.

        Returns:
            False when the listener is finished (the runner and its threads are gone).
        """
        notice = bytearray(NOTIF_BYTES)  # the kernel wants it zeroed
        try:
            fcntl.ioctl(self.fd, IOCTL_NOTIF_RECV, notice, True)
        except OSError as exc:
            # ENOENT: the caller died after the listener woke; nothing to answer.
            return exc.errno in (errno.ENOENT, errno.EINTR)
        ident, _pid, _flags, nr = struct.unpack_from("=QIIi", notice)
        label, error = self.calls.get(nr, (f"system call {nr}", errno.EPERM))
        if len(self._seen) < MAX_RECORDED:
            self._seen.append(f"the system call {label}")
        with contextlib.suppress(OSError):  # ENOENT: the caller died meanwhile
            fcntl.ioctl(self.fd, IOCTL_NOTIF_SEND, NOTIF_RESP.pack(ident, 0, -error, 0))
        return True
