"""What a project's team knows: knowledge items (definitions, rules, column descriptions,
verified examples, lessons), their review, and the data dictionary of sources."""
