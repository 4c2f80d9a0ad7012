"""Inside the sandbox: everything that runs in a worker (and in the fork server it is
forked from). `python -m app.sandbox.worker` starts one (`main.py`).

This room trusts nothing of the host and may import only itself and the modules both sides
share (`app.sandbox.interface`, `app.sandbox.protocol`, `app.sandbox.snapshot_format`,
`app.sandbox.layout`): a worker is given only those (`isolation.py`, `link_package`), and
tests/test_import_rules.py holds it to that.

- `main.py`: start-up, the split into supervisor and runner, the runner's request loop
- `session.py`: the executor and what a step shows (charts, tables, files, output)
- `supervisor.py`: the only part that holds the channel to the backend
- `lockdown.py`: resource limits, prctl, the system-call filter and its listener
- `capture.py`: output capture and the step's artifacts
- `snapshot.py`: saving and loading the session's variables
- `zygote.py`: the fork server workers are forked from
- `modules.py`: the libraries a worker imports at start and warms
"""
