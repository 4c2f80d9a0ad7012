"""Search over what a user can see: sessions' titles, questions, answers, steps' code and
artifacts' names, in the database's own full-text engine (PostgreSQL's text search with
GIN indexes, SQLite's FTS5), hits highlighted safely.

- `schemas`: the hit and its page.
- `postgres`, `sqlite`: the query on each database.
- `service`: which one, and the highlight markers made into safe `<mark>` snippets.
"""
