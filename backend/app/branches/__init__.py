"""Branches of a session (issue 43): their past, their tree, their state, their deletion."""
