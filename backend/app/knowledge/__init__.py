"""What a project's team knows: knowledge items (definitions, rules, column descriptions,
verified examples, lessons), their review, the review pass that proposes them after a run,
the screening every proposal goes through, and the data dictionary of sources."""
