"""The `workbench` command: the public API from a terminal."""
