"""The fork server: `python -m app.sandbox.zygote`, inside bubblewrap, one per backend.

A worker started from nothing spends seconds of CPU importing Python, pandas, matplotlib,
plotly and smolagents; fifty sessions starting at once on two cores wait a minute for
that alone. The fork server imports all of it once and forks a worker per session in
milliseconds. It never runs analysis code itself.

It runs in the same bubblewrap sandbox as a worker (no network, read-only runtime, no
secrets in its environment), except that every session's workspace folder is bound at
`/run/workbench-workspaces` and it may create user namespaces. Each worker it forks is
isolated from it and from the others before any of its code is read:

    fork server --fork--> keeper: new user, mount, pid, net, ipc and uts namespaces;
                          its own workspace bound at /workspace, its project files'
                          folder read-only at FILES_INSIDE, the folder of all
                          workspaces covered by an empty read-only tmpfs, fresh /tmp,
                          /dev (read-only, the usual device nodes) with its own /dev/shm,
                          and output tmpfs; no new user namespaces below it
        keeper --fork--> init: pid 1 of the new pid namespace (the keeper exits); mounts
                          the namespace's own /proc (it shows the worker's processes only)
          init --fork--> worker: no capabilities, not dumpable (no /proc/<pid>/root for
                          anybody), then the usual worker: resource limits, executor,
                          system-call filter (which refuses mount, unshare, fork and exec)

A /proc of one's own can be mounted only where the /proc above it is fully visible, so the
fork server starts with CAP_SYS_ADMIN in its sandbox, takes off the read-only covers bwrap
puts on parts of its /proc, and drops every capability but CAP_SETFCAP (see
`isolation._fork_server_options`) before it does anything else; each init puts the covers
back on its own /proc. Requests are read into one buffer that is
wiped after each fork and parsed by the keeper only: no worker inherits another session's
request.

The init waits for its worker and reports how it ended; when it dies, so does the worker.
Requests arrive on the control socket (SOCK_SEQPACKET; its descriptor in
WORKBENCH_CONTROL_FD) as one JSON object with two descriptors: the worker's channel (a
stream socket, on which the backend then speaks the worker protocol) and the write end of a
pipe for the exit status:

    backend -> fork server: {"workspace": "<folder name>", "tmpfs_mb": [tmp, shm]} + 2 fds
    init -> backend, on the channel:   b"P" + a pidfd of the worker (SCM_RIGHTS), or
                                       b"E" + why the worker could not be started
    init -> backend, on the pipe:      the worker's exit status (Popen's convention)
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import gc
import json
import os
import signal
import socket
import stat
import sys
import time
import traceback
from typing import Any

from app.sandbox.layout import (
    FILES_FOLDER,
    FILES_INSIDE,
    OUTPUT_INSIDE,
    OUTPUT_MB,
    SANDBOX_UID,
    WORKSPACE_INSIDE,
    WORKSPACE_NAME,
    WORKSPACES_INSIDE,
    python_roots,
)
from app.sandbox.worker.lockdown import PR_SET_DUMPABLE, PR_SET_PDEATHSIG, prctl

KEEPER_FAILED = 70
FD_BYTES = array.array("i").itemsize

# <sched.h>, <sys/mount.h>, <linux/prctl.h>, <linux/capability.h>
CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
LINUX_CAPABILITY_VERSION_3 = 0x20080522
CAP_SETFCAP = 31

_libc = ctypes.CDLL(None, use_errno=True)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            kind.encode() if kind else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _drop_capabilities(keep: int = 0) -> None:
    """Drop every capability but those in `keep` (a mask of the first 32)."""
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)(_CapData(keep, keep, 0), _CapData(0, 0, 0))
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _tmpfs(target: str, megabytes: int) -> None:
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={megabytes << 20},mode=1777")


def _fresh_tmp(megabytes: int) -> None:
    """An empty /tmp of our own. Parts of the Python runtime that live under /tmp (a
    checkout or a virtualenv there) are bound again on top of it, read-only, as bubblewrap
    binds them on top of its own /tmp: libraries not imported yet are read from there."""
    runtime = [root for root in python_roots() if root.startswith("/tmp/")]
    held = [os.open(root, os.O_PATH | os.O_DIRECTORY) for root in runtime]
    _tmpfs("/tmp", megabytes)
    for root, fd in zip(runtime, held, strict=True):
        os.makedirs(root, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", root, None, MS_BIND | MS_REC)
        _mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.close(fd)


# What bwrap covers read-only on a /proc it mounts (and so must each init on its own).
PROC_COVERS = ("sys", "sysrq-trigger", "irq", "bus")
# The device nodes a worker gets (bound from the sandbox's /dev), and its links.
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
DEVICE_LINKS = {
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}
MNT_DETACH = 2


def _uncover_proc() -> None:
    """Take bwrap's covers off the fork server's /proc (see the module docstring)."""
    for name in PROC_COVERS:
        with contextlib.suppress(OSError):  # not covered here (not a mount point)
            _check(_libc.umount2(f"/proc/{name}".encode(), MNT_DETACH), f"umount /proc/{name}")


def _own_proc() -> None:
    """The pid namespace's own /proc, covered where bwrap covers its own."""
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_COVERS:
        path = f"/proc/{name}"
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _own_dev(shm_mb: int) -> None:
    """A /dev of this worker's own: read-only, the usual nodes, a private /dev/shm."""
    held = {}
    for name in DEVICES:
        with contextlib.suppress(OSError):
            held[name] = os.open(f"/dev/{name}", os.O_PATH)
    _mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755")
    for name, fd in held.items():
        os.close(os.open(f"/dev/{name}", os.O_CREAT | os.O_WRONLY, 0o666))
        _mount(f"/proc/self/fd/{fd}", f"/dev/{name}", None, MS_BIND)
        os.close(fd)
    for name, target in DEVICE_LINKS.items():
        os.symlink(target, f"/dev/{name}")
    os.mkdir("/dev/shm")
    os.mkdir("/dev/pts")
    _mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    _tmpfs("/dev/shm", shm_mb)


def _isolate(workspace: str, tmpfs_mb: tuple[int, int]) -> None:
    """Namespaces and mounts of the keeper (and so of its worker): see the module docstring."""
    folder = f"{WORKSPACES_INSIDE}/{workspace}"
    # A bind mount follows links: the folder must be one (only the backend makes them).
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise ValueError(f"{workspace!r} is not a workspace folder")
    files = f"{WORKSPACES_INSIDE}/{FILES_FOLDER}/{workspace}"
    if not stat.S_ISDIR(os.lstat(files).st_mode):
        raise ValueError(f"{workspace!r} has no folder of project files")
    _enter_namespaces()
    _mount(folder, WORKSPACE_INSIDE, None, MS_BIND | MS_REC)
    # The project's files, read-only: the code may read them, never change the bytes every
    # session of the project shares. (No MS_REC: nothing is mounted below it.)
    _mount(files, FILES_INSIDE, None, MS_BIND)
    _mount(None, FILES_INSIDE, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    # Every other session's folder disappears under an empty, read-only tmpfs. The mount
    # beneath is locked to this namespace: nobody here can take the cover off.
    cover = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    _mount("tmpfs", WORKSPACES_INSIDE, "tmpfs", cover, "size=4k")
    _fresh_tmp(tmpfs_mb[0])
    _own_dev(tmpfs_mb[1])
    _tmpfs(OUTPUT_INSIDE, OUTPUT_MB)
    # No user namespaces below this one (the worker's system-call filter refuses them too).
    with contextlib.suppress(OSError), open("/proc/sys/user/max_user_namespaces", "w") as file:
        file.write("0")


def _enter_namespaces() -> None:
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
    _check(_libc.unshare(flags | CLONE_NEWUTS), "unshare")
    # Writing our own maps needs /proc/self owned by us (the fork server is not dumpable).
    # Inside, the worker is "nobody", as a worker that bwrap starts itself.
    prctl(PR_SET_DUMPABLE, 1)
    for name, text in (("setgroups", "deny"), ("uid_map", f"{SANDBOX_UID} {uid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    with open("/proc/self/gid_map", "w") as file:
        file.write(f"{SANDBOX_UID} {gid} 1")
    prctl(PR_SET_DUMPABLE, 0)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)


def _self_test() -> str | None:
    """Why workers cannot be isolated here (no nested user namespaces, say), or None."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 0
        try:
            _enter_namespaces()
            _mount(WORKSPACES_INSIDE, WORKSPACE_INSIDE, None, MS_BIND | MS_REC)
            _fresh_tmp(1)
            for root in python_roots():  # the runtime is still all there
                if not os.listdir(root):
                    raise RuntimeError(f"{root} looks empty to a forked worker")
        except BaseException as exc:
            os.write(write, f"{type(exc).__name__}: {exc}".encode())
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        reason = pipe.read().decode("utf-8", "replace")
    _, wait_status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(wait_status) != 0:
        return reason or f"the test ended with status {os.waitstatus_to_exitcode(wait_status)}"
    return None


def _only_descriptors(keep: set[int]) -> None:
    """Close every inherited descriptor but these; 0, 1 and 2 become /dev/null."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 16)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


def _become_worker(channel: int, started: float) -> int:
    """The worker: shed what is left and serve the backend."""
    from app.sandbox.worker import main as worker

    os.chdir(WORKSPACE_INSIDE)
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # fork copies the global generator's state: each worker its own
        numpy.random.seed()
    _drop_capabilities()
    return worker.serve(channel, channel, started)


def _keep(request: dict[str, Any], channel: int, status: int) -> int:
    """The keeper: isolate, fork the namespace's init, and go (the fork server reaps it)."""
    started = time.perf_counter()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _only_descriptors({channel, status})
    try:
        workspace = str(request.get("workspace"))
        if not WORKSPACE_NAME.match(workspace):
            raise ValueError(f"not a workspace folder name: {workspace!r}")
        tmp_mb, shm_mb = (int(mb) for mb in request.get("tmpfs_mb") or (64, 16))
        _isolate(workspace, (tmp_mb, shm_mb))
        if os.fork() == 0:
            code = KEEPER_FAILED
            try:
                code = _init(channel, status, started)
            finally:
                os._exit(code)
    except BaseException:
        with contextlib.suppress(OSError):
            os.write(channel, b"E" + traceback.format_exc(limit=3).encode()[-4000:])
        return KEEPER_FAILED
    return 0


def _init(channel: int, status: int, started: float) -> int:
    """Pid 1 of the new namespace: fork the worker, hand the backend its pidfd, report its
    end. (The worker itself must not be pid 1: the kernel drops signals such as SIGXCPU,
    the CPU-time limit's, that pid 1 has no handler for.)"""
    _own_proc()
    pid = os.fork()
    if pid == 0:
        os.close(status)
        code = 1
        try:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            code = _become_worker(channel, started)
        finally:
            os._exit(code)
    pidfd = os.pidfd_open(pid)
    with socket.socket(fileno=channel) as sock:
        socket.send_fds(sock, [b"P"], [pidfd])
    os.close(pidfd)
    _, wait_status = os.waitpid(pid, 0)
    os.write(status, str(os.waitstatus_to_exitcode(wait_status)).encode())
    return 0


def _reap(*_: Any) -> None:
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def _spawn(message: memoryview, fds: list[int]) -> None:
    """Fork a keeper for a request; only the keeper reads what the request says."""
    if len(fds) != 2:
        for fd in fds:
            os.close(fd)
        return
    channel, status = fds
    try:
        pid = os.fork()
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.write(channel, b"E" + f"{type(exc).__name__}: {exc}".encode())
        pid = -1
    if pid == 0:
        code = KEEPER_FAILED
        try:
            try:
                request = json.loads(bytes(message))
            except ValueError as exc:
                os.write(channel, b"E" + f"not a request: {exc}".encode())
            else:
                code = _keep(request, channel, status)
        finally:
            os._exit(code)
    os.close(channel)
    os.close(status)


def _receive(control: socket.socket, buffer: bytearray) -> tuple[int, list[int]]:
    """One request into `buffer` (no copy of it anywhere else), and its descriptors."""
    size, ancillary, _, _ = control.recvmsg_into([buffer], socket.CMSG_SPACE(2 * FD_BYTES))
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(data) - len(data) % FD_BYTES
            fds += array.array("i", data[:usable]).tolist()
    return size, fds


def main() -> int:
    """Load the libraries, say ready, then fork a worker per request until the backend goes."""
    prctl(PR_SET_DUMPABLE, 0)  # nobody may look into /proc/<our pid>: we see every workspace
    _uncover_proc()
    _drop_capabilities(keep=1 << CAP_SETFCAP)
    control = socket.socket(fileno=int(os.environ.pop("WORKBENCH_CONTROL_FD")))
    from app.sandbox.worker import session

    session.preload()
    session.warm_safe_modules()
    reason = _self_test()
    if reason is not None:
        control.send(json.dumps({"type": "unusable", "error": reason}).encode())
        return 1
    signal.signal(signal.SIGCHLD, _reap)
    # What is loaded now stays out of the garbage collector's sight: a collection in a
    # worker would otherwise write to every object's header and so copy every page.
    gc.freeze()
    control.send(json.dumps({"type": "ready"}).encode())
    buffer = bytearray(1 << 16)
    while True:
        size, fds = _receive(control, buffer)
        if not size:
            return 0
        _spawn(memoryview(buffer)[:size], fds)
        buffer[:size] = bytes(size)  # forked workers to come must not find this request


if __name__ == "__main__":
    status = main()
    sys.stderr.flush()
    os._exit(status)
