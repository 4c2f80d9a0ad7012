"""Comments on a session's answers: any member may comment and reply; the author or an
owner deletes one (its replies go with it)."""
