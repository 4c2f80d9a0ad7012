"""Storage quotas: what a user and a project keep in storage (usage), the preview copies
on disk (copies), and the limits an upload must stay within (guard)."""
