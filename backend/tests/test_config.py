from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.config import Settings


def make(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def test_embedded_defaults(tmp_path: Path) -> None:
    settings = make(DATA_DIR=tmp_path)
    assert (settings.HOST, settings.PORT) == ("127.0.0.1", 8000)
    assert settings.database_url == f"sqlite+aiosqlite:///{tmp_path.resolve() / 'workbench.db'}"
    assert settings.REDIS_URL is None and settings.S3_ENDPOINT is None
    assert settings.MAX_UPLOAD_BYTES == 10 * 1024**3
    key = settings.signing_key
    assert len(key) > 40 and make(DATA_DIR=tmp_path).signing_key == key  # kept across restarts
    assert (tmp_path / ".secret_key").stat().st_mode & 0o077 == 0


def test_model_list_is_a_comma_list() -> None:
    assert make(LLM_MODELS="openai/gpt-4o, ollama/qwen2.5 ,").LLM_MODELS == [
        "openai/gpt-4o",
        "ollama/qwen2.5",
    ]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"DATABASE_URL": "postgresql://u@h/db"}, "postgresql+asyncpg://"),
        ({"REDIS_URL": "http://h"}, "redis://"),
        (
            {"S3_ENDPOINT": "http://minio:9000", "S3_ACCESS_KEY": "a", "S3_SECRET_KEY": "b"},
            "without a scheme",
        ),
        ({"S3_ENDPOINT": "minio:9000"}, "S3_ACCESS_KEY and S3_SECRET_KEY"),
        ({"ADMIN_EMAIL": "a@b.co"}, "together"),
        ({"ADMIN_EMAIL": "a@b.co", "ADMIN_PASSWORD": "short"}, "8 characters"),
        ({"PORT": 70000}, "PORT"),
        ({"ENVIRONMENT": "production"}, "SECRET_KEY of your own"),
        ({"ENVIRONMENT": "production", "SECRET_KEY": "changethis"}, "SECRET_KEY of your own"),
        ({"ENVIRONMENT": "production", "SECRET_KEY": "x" * 20}, "at least 32"),
        (
            {
                "ENVIRONMENT": "production",
                "SECRET_KEY": "k" * 40,
                "S3_ENDPOINT": "m:9000",
                "S3_ACCESS_KEY": "minioadmin",
                "S3_SECRET_KEY": "minioadmin",
            },
            "S3_SECRET_KEY is a well-known default",
        ),
    ],
)
def test_bad_settings_fail_with_a_clear_message(values: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        make(**values)


def test_production_with_own_secrets_is_accepted() -> None:
    settings = make(
        ENVIRONMENT="production",
        SECRET_KEY="s" * 48,
        ADMIN_EMAIL="ops@corp.com",
        ADMIN_PASSWORD="a-long-password",
    )
    assert settings.signing_key == "s" * 48
