"""Write docs/configuration.md and .env.example from the descriptions on `Settings`.

Each setting is described once, on its field in app/config/; this script renders both
documents from those fields, so they cannot tell different stories. Run it with
`make settings-docs` after changing a setting; tests/test_settings_docs.py fails while the
committed documents differ from what it writes.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from pydantic.fields import FieldInfo

from app.config import REPO_ROOT, Section, Settings

CONFIGURATION_MD = REPO_ROOT / "docs" / "configuration.md"
ENV_EXAMPLE = REPO_ROOT / ".env.example"
COMMAND = "make settings-docs"
COMPOSE_ONLY = "Docker compose only"


@dataclass(frozen=True)
class Variable:
    """One environment variable as the documents show it."""

    name: str
    section: str
    description: str
    default: str  # as shown in the docs: a Markdown code span, "empty", or "unset: what then"
    line: str  # the value written after `# NAME=` in .env.example
    compose: str | None = None


# Variables that are not fields of Settings: read by LiteLLM itself, or only by the compose
# files (docker-compose.yml and docker-compose.infra.yml).
OTHER_VARIABLES = (
    *(
        Variable(
            name,
            Section.llm.value,
            f"{provider}'s API key, read by LiteLLM itself for models `{prefix}/…` (any "
            "provider LiteLLM supports reads its own key the same way).",
            "unset",
            "",
        )
        for name, provider, prefix in (
            ("OPENROUTER_API_KEY", "OpenRouter", "openrouter"),
            ("OPENAI_API_KEY", "OpenAI", "openai"),
            ("ANTHROPIC_API_KEY", "Anthropic", "anthropic"),
        )
    ),
    Variable(
        "LITELLM_LOCAL_MODEL_COST_MAP",
        Section.llm.value,
        "`True`: LiteLLM uses its bundled model price list instead of downloading it at "
        "import. The backend sets it to `True` when it is unset.",
        "`True`",
        "True",
    ),
    Variable(
        "WORKBENCH_PORT",
        COMPOSE_ONLY,
        "Host port of the web app (published on 127.0.0.1).",
        "`8000`",
        "8000",
    ),
    Variable(
        "POSTGRES_USER",
        COMPOSE_ONLY,
        "PostgreSQL user of the `postgres` service (applied when its volume is first "
        "created); docker compose's default `DATABASE_URL` uses it.",
        "`workbench`",
        "workbench",
    ),
    Variable(
        "POSTGRES_PASSWORD",
        COMPOSE_ONLY,
        "PostgreSQL password of the `postgres` service (applied when its volume is first "
        "created); docker compose's default `DATABASE_URL` uses it. Change it (and then "
        "`DATABASE_URL`) before exposing the workbench.",
        "`workbench`",
        "workbench",
    ),
    *(
        Variable(
            name, COMPOSE_ONLY, f"Host port of {what} (published on 127.0.0.1).", f"`{port}`", port
        )
        for name, what, port in (
            ("POSTGRES_PORT", "PostgreSQL", "5432"),
            ("REDIS_PORT", "Redis", "6379"),
            ("MINIO_API_PORT", "MinIO's S3 API", "9000"),
            ("MINIO_CONSOLE_PORT", "MinIO's console", "9001"),
        )
    ),
    Variable(
        "SANDBOX_SERVICE_MAX_WORKERS",
        COMPOSE_ONLY,
        "The sandbox service's live workers at most (each active session has one; idle ones "
        "stop after `SANDBOX_IDLE_SECONDS`); raise its `pids_limit` with it, about 70 per "
        "worker.",
        "`32`",
        "32",
    ),
    Variable(
        "SANDBOX_SERVICE_MEMORY",
        COMPOSE_ONLY,
        "Memory of all the sandbox service's workers together (no swap); when it is reached "
        "the kernel kills a worker, normally the largest.",
        "`8g`",
        "8g",
    ),
    Variable(
        "SANDBOX_APPARMOR_PROFILE",
        COMPOSE_ONLY,
        "AppArmor profile of the sandbox service: `unconfined`, or `workbench-sandbox` once "
        "loaded (see `docs/sandbox.md`).",
        "`unconfined`",
        "unconfined",
    ),
)


def _plain(value: object) -> str:
    """A default as it is written in an environment variable."""
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Path):
        return value.as_posix() if value.is_absolute() else f"./{value.as_posix()}"
    if isinstance(value, list):
        return ",".join(map(str, value))
    if isinstance(value, dict):
        return "{}" if not value else str(value)
    return str(value)


def _extra(field: FieldInfo) -> dict[str, object]:
    """The section, unset meaning, compose value and secret flag app/config/ gives a field."""
    extra = field.json_schema_extra
    return dict(extra) if isinstance(extra, dict) else {}


def settings_variables() -> list[Variable]:
    """Every field of Settings as a Variable, in the order the class declares them."""
    variables = []
    for name, field in Settings.model_fields.items():
        extra = _extra(field)
        secret = bool(extra.get("secret"))
        default = field.default
        if secret or default is None:
            shown, line = "unset", ""
            if extra.get("unset"):
                shown += f": {extra['unset']}"
        elif default in ([], {}):
            shown, line = "empty", _plain(default)
        else:
            shown = line = _plain(default)
            shown = f"`{shown}`"
        if field.examples and not secret:
            line = _plain(field.examples[0])
        compose = extra.get("compose")
        variables.append(
            Variable(
                name=name,
                section=str(extra["section"]),
                description=field.description or "",
                default=shown,
                line=line,
                compose=str(compose) if compose is not None else None,
            )
        )
    return variables


def grouped() -> dict[str, list[Variable]]:
    """The variables by section: Settings' sections in their order, then compose-only ones."""
    groups: dict[str, list[Variable]] = {section.value: [] for section in Section}
    groups[COMPOSE_ONLY] = []
    for variable in (*settings_variables(), *OTHER_VARIABLES):
        groups[variable.section].append(variable)
    return {section: variables for section, variables in groups.items() if variables}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_configuration() -> str:
    """docs/configuration.md: a table per section, name, default and description."""
    out = [
        "# Configuration",
        "",
        f"<!-- Written by `{COMMAND}` from backend/app/config/: edit the descriptions "
        "there, not here. -->",
        "",
        "Workbench reads its settings from environment variables, or from a `.env` file at "
        "the repository root (the one docker compose reads too; the backend also reads "
        "`backend/.env`). [`.env.example`](../.env.example) lists every one, commented out "
        "with its default: copy it to `.env` and uncomment what you change. A bad value stops "
        "the start-up with a sentence saying what to fix.",
        "",
        "Defaults are those of `make run`, which runs embedded (SQLite, in-process locks, "
        "files under `DATA_DIR`); where docker compose gives another value, the default says "
        "so. A `DATABASE_URL`, `REDIS_URL` or `S3_ENDPOINT` in `.env` applies to both: a "
        "localhost URL works for `make run` against `make up`, not inside the compose "
        "backend. *unset* means the variable is absent; an empty value is not the same for "
        "every setting (an empty `ADMIN_PASSWORD`, for one, is refused).",
        "",
        "Before exposing the workbench to others set `ENVIRONMENT=production` and your own "
        "`SECRET_KEY`, `ADMIN_PASSWORD`, `S3_SECRET_KEY` and (docker compose) "
        "`POSTGRES_PASSWORD`: production refuses missing or well-known secrets.",
        "",
        "Read elsewhere: the `workbench` command's `WORKBENCH_URL`, `WORKBENCH_TOKEN`, "
        "`WORKBENCH_PROJECT` and `WORKBENCH_CONFIG_DIR` ([cli.md](cli.md)); the sandbox's "
        "runtime cache, `WORKBENCH_SANDBOX_CACHE` ([sandbox.md](sandbox.md)); the tests' "
        "`TEST_POSTGRES_DSN` and `TEST_REDIS_URL` ([development.md](development.md)).",
    ]
    for section, variables in grouped().items():
        out += ["", f"## {section}", "", "| name | default | description |", "|---|---|---|"]
        for variable in variables:
            default = variable.default
            if variable.compose:
                default += f" (docker compose: {variable.compose})"
            out.append(f"| `{variable.name}` | {_cell(default)} | {_cell(variable.description)} |")
    return "\n".join(out) + "\n"


def _comment(text: str) -> list[str]:
    return textwrap.wrap(
        text,
        width=90,
        initial_indent="# ",
        subsequent_indent="# ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def render_env_example() -> str:
    """.env.example: every variable commented out with its default, grouped by section."""
    out = [
        "# Workbench configuration. Copy to `.env` and uncomment what you want to change.",
        f"# Written by `{COMMAND}` from backend/app/config/: edit the descriptions there,",
        "# not here. docs/configuration.md describes the same settings in tables.",
        "#",
        *_comment(
            "Every line is commented out, so a copy used unchanged keeps every default. Both "
            "the backend (`make run`) and docker compose read this .env at the repository "
            "root (the backend also reads backend/.env). With no setting the backend runs "
            "embedded (SQLite, in-process locks, files under DATA_DIR); docker compose points "
            "its backend at its own postgres, redis and minio. Where the two defaults differ, "
            "both are given. A DATABASE_URL, REDIS_URL or S3_ENDPOINT set here applies to "
            "both: a localhost URL works for `make run` against `make up`, not inside the "
            "compose backend."
        ),
        "#",
        *_comment(
            "Uncomment a line only with a value: an empty value is not the same as unset for "
            "every setting (an empty ADMIN_PASSWORD, for one, is refused). Before exposing the "
            "workbench to others set ENVIRONMENT=production and your own SECRET_KEY, "
            "ADMIN_PASSWORD, S3_SECRET_KEY and (docker compose) POSTGRES_PASSWORD."
        ),
    ]
    for section, variables in grouped().items():
        out += ["", f"# --- {section} ".ljust(90, "-")]
        for variable in variables:
            default = variable.default.replace("`", "")
            if variable.compose:
                default += f" (docker compose: {variable.compose.replace('`', '')})"
            out += _comment(f"{variable.description} Default: {default}.")
            out.append(f"# {variable.name}={variable.line}")
    return "\n".join(out) + "\n"


DOCUMENTS = {CONFIGURATION_MD: render_configuration, ENV_EXAMPLE: render_env_example}


def stale() -> list[Path]:
    """The documents whose committed text differs from what this script writes."""
    return [
        path
        for path, render in DOCUMENTS.items()
        if not path.exists() or path.read_text() != render()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="only say whether the documents are up to date"
    )
    args = parser.parse_args(argv)
    if args.check:
        for path in stale():
            print(f"{path.relative_to(REPO_ROOT)} is out of date: run `{COMMAND}`")
        return 1 if stale() else 0
    for path, render in DOCUMENTS.items():
        path.write_text(render())
        print(f"wrote {path.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
