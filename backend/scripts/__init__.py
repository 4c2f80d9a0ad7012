"""Developer scripts, run as `uv run --frozen python -m scripts.<name>`; not the app's."""
