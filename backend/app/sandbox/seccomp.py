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
"""

from __future__ import annotations

import ctypes
import errno
import functools
import io
import os
import platform
import socket

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

# <linux/prctl.h>, <linux/seccomp.h>
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}
BPF_INSTRUCTION_BYTES = 8


class SeccompUnavailable(RuntimeError):
    """The filter cannot be built or installed here; the message says why."""


def denied_calls() -> list[str]:
    """Every system call the filter refuses, for documentation and /readyz."""
    return sorted({*DENIED, "clone (without CLONE_THREAD)", "clone3", "socket (not AF_UNIX)"})


@functools.cache
def filter_program() -> bytes:
    """The filter as a classic BPF program for this machine's architecture (cached).

    Returns:
        The raw `struct sock_filter` array.

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
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        for name in DENIED:
            try:
                rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
            except (OSError, RuntimeError, ValueError):
                # A call this architecture does not have (iopl on arm64) needs no rule.
                if _known_syscall(seccomp, name):
                    raise
        rules.add_rule(
            seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0)
        )
        # clone3 passes its flags in memory, out of the filter's sight: ENOSYS makes libc
        # use clone, which the rule above can judge.
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        rules.add_rule(
            seccomp.ERRNO(errno.EAFNOSUPPORT),
            "socket",
            seccomp.Arg(0, seccomp.NE, socket.AF_UNIX),
        )
        with io.BytesIO() as buffer:
            _export(rules, buffer)
            program = buffer.getvalue()
    except (OSError, RuntimeError, ValueError) as exc:
        raise SeccompUnavailable(f"the system-call filter could not be built: {exc}") from exc
    if not program or len(program) % BPF_INSTRUCTION_BYTES:
        raise SeccompUnavailable("libseccomp produced an empty or malformed filter")
    return program


def _known_syscall(seccomp: object, name: str) -> bool:
    try:
        return int(seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)) >= 0  # type: ignore[attr-defined]
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


def install(program: bytes) -> None:
    """Install the filter on every thread of the calling process (irreversible).

    Args:
        program: The BPF program from filter_program().

    Raises:
        SeccompUnavailable: The kernel refused it.
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
    libc.syscall.restype = ctypes.c_long
    done = libc.syscall(
        ctypes.c_long(number),
        ctypes.c_long(SECCOMP_SET_MODE_FILTER),
        ctypes.c_long(SECCOMP_FILTER_FLAG_TSYNC),
        ctypes.byref(fprog),
    )
    if done != 0:
        reason = os.strerror(ctypes.get_errno()) if done < 0 else f"thread {done} out of sync"
        raise SeccompUnavailable(f"the kernel refused the system-call filter: {reason}")
