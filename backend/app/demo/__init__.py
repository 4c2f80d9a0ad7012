"""The demo project: what a newcomer opens on a first start with no model configured.

A small dataset of its own (`data/monthly_sales.csv`, made by `dataset.py`) and a recorded
session (`data/recording.json`: one question answered by a real run with the scripted
model, with its steps, chart, table and answer, and its events for the browser to replay).
`service.open_demo` loads both into the database and storage, once per user; the project
is then an ordinary one (cells run on its dataset with no model). Regenerate the recording
with `cd backend && uv run python -m scripts.record_demo`.
"""
