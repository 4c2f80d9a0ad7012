"""Code a hostile step runs: helpers that several red-team and sandbox tests share."""

# Defines to_every_descriptor(frame), which writes `frame` to every descriptor the code's
# process may hold, and framed(text), a protocol frame (4-byte length + body) of a text.
TO_EVERY_DESCRIPTOR = """
import io
def to_every_descriptor(frame):
    for fd in range(3, 64):
        try:
            out = io.open(fd, 'wb', closefd=False)
            out.write(frame)
            out.flush()
        except Exception:
            pass
def framed(text):
    body = text.encode()
    return len(body).to_bytes(4, 'big') + body
"""

# Defines own_processes(): the pid and name of every process the code can see (processes,
# not threads: a thread's /proc/<tid> opens too, though it is not listed).
OWN_PROCESSES = """
import io
def own_processes():
    seen = []
    for pid in range(1, 4000):
        try:
            status = io.open(f'/proc/{pid}/status').read()
        except Exception:
            continue
        if f'Tgid:\\t{pid}\\n' in status:
            seen.append([pid, status.split('\\n')[0]])
    return seen
"""
