"""The system-call filter around analysis code: what such code never needs is refused.

The filter is compiled outside the sandbox, by the trusted side, with libseccomp (through
PyPI's `pyseccomp`), to a classic BPF program. The worker installs it on all of its threads
after its libraries are imported and before it reads any code, in every mode (bubblewrap,
the sandbox service, and limits only). Installing needs only libc (`prctl`, `seccomp`),
so the sandbox needs neither libseccomp nor a way to run `ldconfig`.

Refused with EPERM unless noted:
- new processes and programs: fork, vfork, clone without CLONE_THREAD, execve, execveat
  (clone3 answers ENOSYS so that libc falls back to clone for threads). A fork bomb has
  nothing to fork with, and the worker's memory limit covers its whole process tree;
- sockets other than AF_UNIX (no network even where no network namespace exists);
- debugging and other processes' memory: ptrace, process_vm_readv/writev, kcmp, pidfd_getfd;
- mounts and namespaces: mount, umount2, pivot_root, chroot, unshare, setns, the new mount
  API (fsopen, fsmount, fsconfig, fspick, move_mount, open_tree, mount_setattr);
- kernel attack surface: keyctl, add_key, request_key, bpf, perf_event_open, userfaultfd,
  io_uring_setup/enter/register, open_by_handle_at, name_to_handle_at;
- the machine: init_module, finit_module, delete_module, kexec_load, kexec_file_load,
  reboot, swapon, swapoff, acct, quotactl, syslog, settimeofday, clock_settime, adjtimex,
  clock_adjtime, iopl, ioperm, vhangup, personality.
System calls of another architecture's ABI (x32, i386) kill the process.

Two programs are compiled from the same rules. The worker's supervisor installs the quiet
one: a refused call answers its error number. The runner, which runs the analysis code,
installs the reporting one: each refused call is first handed to the supervisor (a seccomp
user notification, SECCOMP_RET_USER_NOTIF, through a listener only the supervisor holds),
which records it and answers the same error. The code can ignore the error, as libc's
`system()` returning -1 would let it, but not the record: the step fails with what was
refused (`Listener`). Where the kernel has no listeners (before Linux 5.7) the runner
falls back to the quiet program.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import errno
import fcntl
import functools
import io
import os
import platform
import select
import socket
import struct
from dataclasses import dataclass, field
from typing import Any

# What the filter refuses (EPERM), besides the argument-dependent rules below.
DENIED = (
    "fork",
    "vfork",
    "execve",
    "execveat",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_by_handle_at",
    "name_to_handle_at",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "syslog",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "clock_adjtime",
    "iopl",
    "ioperm",
    "vhangup",
    "personality",
)
CLONE_THREAD = 0x00010000
# What a refused call tried, in the words the step's error uses.
PURPOSES = {
    "fork": "a new process",
    "vfork": "a new process",
    "clone": "a new process",
    "execve": "running a program",
    "execveat": "running a program",
    "socket": "a network socket",
    "ptrace": "another process",
    "process_vm_readv": "another process's memory",
    "process_vm_writev": "another process's memory",
    "kcmp": "another process",
    "pidfd_getfd": "another process's files",
    "unshare": "a namespace",
    "setns": "a namespace",
}

# <linux/prctl.h>, <linux/seccomp.h>
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
SECCOMP_FILTER_FLAG_TSYNC_ESRCH = 1 << 4
# _IOWR('!', 0, struct seccomp_notif) and _IOWR('!', 1, struct seccomp_notif_resp)
NOTIF_BYTES = 80  # id u64, pid u32, flags u32, seccomp_data (nr i32, arch u32, ip u64, args 6 u64)
NOTIF_RESP = struct.Struct("=QqiI")  # id, val, error, flags
IOCTL_NOTIF_RECV = (3 << 30) | (NOTIF_BYTES << 16) | (ord("!") << 8) | 0
IOCTL_NOTIF_SEND = (3 << 30) | (NOTIF_RESP.size << 16) | (ord("!") << 8) | 1
MAX_RECORDED = 100  # refused calls kept between two takes
SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}
BPF_INSTRUCTION_BYTES = 8


class SeccompUnavailable(RuntimeError):
    """The filter cannot be built or installed here; the message says why."""


@dataclass(frozen=True)
class Filter:
    """The compiled filter a worker installs (see the module docstring)."""

    quiet: bytes
    reporting: bytes
    # Each reported call by its number: what it is ("clone (a new process)") and the error
    # number it answers.
    calls: dict[int, tuple[str, int]] = field(default_factory=dict)

    def to_config(self) -> dict[str, object]:
        """The filter as the worker's configure message carries it."""
        return {
            "quiet": base64.b64encode(self.quiet).decode("ascii"),
            "reporting": base64.b64encode(self.reporting).decode("ascii"),
            "calls": {str(number): list(call) for number, call in self.calls.items()},
        }

    @classmethod
    def from_config(cls, config: object) -> Filter | None:
        """The filter from a configure message (None: the worker runs without one)."""
        if not isinstance(config, dict):
            return None
        calls = config.get("calls") or {}
        return cls(
            base64.b64decode(config["quiet"]),
            base64.b64decode(config["reporting"]),
            {int(number): (str(label), int(error)) for number, (label, error) in calls.items()},
        )


def denied_calls() -> list[str]:
    """Every system call the filter refuses, for documentation and /readyz."""
    return sorted({*DENIED, "clone (without CLONE_THREAD)", "clone3", "socket (not AF_UNIX)"})


@functools.cache
def compiled() -> Filter:
    """The filter for this machine's architecture, both programs (cached).

    Raises:
        SeccompUnavailable: libseccomp is missing or refused a rule.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError, OSError) as exc:
        raise SeccompUnavailable(
            f"libseccomp is not available ({exc}); install it (Debian/Ubuntu: apt-get install "
            "libseccomp2)"
        ) from exc
    try:
        quiet = _program(seccomp, report=False)
        reporting = _program(seccomp, report=True)
        calls = {}
        for name in (*DENIED, "clone", "socket"):
            if _known_syscall(seccomp, name):
                number = int(seccomp.resolve_syscall(seccomp.Arch.NATIVE, name))
                purpose = PURPOSES.get(name)
                label = f"{name} ({purpose})" if purpose else name
                calls[number] = (label, errno.EAFNOSUPPORT if name == "socket" else errno.EPERM)
    except (OSError, RuntimeError, ValueError) as exc:
        raise SeccompUnavailable(f"the system-call filter could not be built: {exc}") from exc
    for program in (quiet, reporting):
        if not program or len(program) % BPF_INSTRUCTION_BYTES:
            raise SeccompUnavailable("libseccomp produced an empty or malformed filter")
    return Filter(quiet, reporting, calls)


def _program(seccomp: Any, *, report: bool) -> bytes:
    """One program of the filter: refused calls answer their error, or are reported."""

    def refuse(number: int) -> int:
        return int(seccomp.NOTIFY) if report else int(seccomp.ERRNO(number))

    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED:
        try:
            rules.add_rule(refuse(errno.EPERM), name)
        except (OSError, RuntimeError, ValueError):
            # A call this architecture does not have (iopl on arm64) needs no rule.
            if _known_syscall(seccomp, name):
                raise
    rules.add_rule(refuse(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    # clone3 passes its flags in memory, out of the filter's sight: ENOSYS makes libc use
    # clone, which the rule above can judge. Not a refusal: nothing is reported.
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(refuse(errno.EAFNOSUPPORT), "socket", seccomp.Arg(0, seccomp.NE, socket.AF_UNIX))
    with io.BytesIO() as buffer:
        _export(rules, buffer)
        return buffer.getvalue()


def _known_syscall(seccomp: Any, name: str) -> bool:
    try:
        return int(seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)) >= 0
    except Exception:
        return False


def _export(rules: object, buffer: io.BytesIO) -> None:
    # libseccomp writes to a file descriptor: use a pipe-free temporary memfd.
    fd = os.memfd_create("workbench-seccomp")
    try:
        with os.fdopen(fd, "w+b", closefd=False) as handle:
            rules.export_bpf(handle)  # type: ignore[attr-defined]
            handle.flush()
        buffer.write(_read_all(fd))
    finally:
        os.close(fd)


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(program: bytes, *, listener: bool = False) -> int | None:
    """Install a program of the filter on every thread of the calling process (irreversible).

    Args:
        program: Filter.quiet or Filter.reporting.
        listener: Ask for the listener its reported calls go to (Filter.reporting).

    Returns:
        The listener's descriptor when one was asked for, else None.

    Raises:
        SeccompUnavailable: The kernel refused it (for a listener: perhaps it has none, as
            before Linux 5.7; install Filter.quiet then).
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
            calls: Filter.calls.
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
