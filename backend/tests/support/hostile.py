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
