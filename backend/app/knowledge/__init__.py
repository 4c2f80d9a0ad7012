"""What a project's team knows: knowledge items, the review pass that proposes them after a
run, and the screening every proposal goes through."""
