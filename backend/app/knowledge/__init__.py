"""What a project's team knows: knowledge items (definitions, rules, column descriptions,
verified examples, lessons), their review, and the data dictionary of sources; the review
pass that proposes items after a run, and the screening every proposal goes through."""
