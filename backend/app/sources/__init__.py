"""A project's databases as data sources: their URLs and sealed passwords, which servers and
files they may reach, checking them, their cached schema and the team's descriptions, and
running the agent's read-only queries against them (querying.stream_query)."""
