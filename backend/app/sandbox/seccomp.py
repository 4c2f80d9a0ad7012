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
refused (`app.sandbox.worker.lockdown.Listener`). Where the kernel has no listeners (before
Linux 5.7) the runner falls back to the quiet program.
"""

from __future__ import annotations

import errno
import functools
import io
import os
import socket
from typing import Any

from app.sandbox.protocol import SeccompFilter
from app.sandbox.worker.lockdown import BPF_INSTRUCTION_BYTES, SeccompUnavailable

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


def denied_calls() -> list[str]:
    """Every system call the filter refuses, for documentation and /readyz."""
    return sorted({*DENIED, "clone (without CLONE_THREAD)", "clone3", "socket (not AF_UNIX)"})


@functools.cache
def compiled() -> SeccompFilter:
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
    return SeccompFilter(quiet, reporting, calls)


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
