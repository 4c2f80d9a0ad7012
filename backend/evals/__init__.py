"""The workbench's own evaluation task set: generated tables, tasks and reference solutions."""
