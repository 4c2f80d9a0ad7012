"""Live sessions: what happens in an open session reaches everyone who has it open.

- `events`: the live events (run.created, presence, session.updated, comment.*), typed.
- `slots`: the bound on open live streams, per user and per process.
- `hub`: publishing those events and serving one session's live stream.
"""
