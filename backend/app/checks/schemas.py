"""What the checks' routes take and give: a check, a check run and its results."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field, field_validator

from app.schemas import Schema

MAX_PAIRS = 20
MAX_VALUE = 500
NAME = re.compile(r"\w{1,64}")
# A plain string as the expected answer is this one name's value.
DEFAULT_NAME = "answer"

CheckResultStatus = Literal["pending", "passed", "failed", "error"]
CheckRunStatusName = Literal["queued", "running", "succeeded", "failed", "cancelled"]

ExpectedIn = dict[str, str | int | float | bool] | str


def value_text(value: Any) -> str:
    """A value as the answer format writes it (as task files give it: text as it is, any
    other JSON value as JSON)."""
    return value if isinstance(value, str) else json.dumps(value)


def normalise_expected(expected: Mapping[str, Any] | str) -> dict[str, str]:
    """{name: value} as text; a plain string is the value of `answer`.

    Raises:
        ValueError: a name that is not a word, a value that the answer format cannot hold.
    """
    pairs = {DEFAULT_NAME: expected} if isinstance(expected, str) else dict(expected)
    if not pairs:
        raise ValueError("give at least one name and its expected value")
    if len(pairs) > MAX_PAIRS:
        raise ValueError(f"at most {MAX_PAIRS} expected values")
    out: dict[str, str] = {}
    for name, value in pairs.items():
        if not NAME.fullmatch(name):
            raise ValueError(
                f"the name {name[:64]!r} is not a word (letters, digits and _, as @name[value])"
            )
        text = value_text(value).strip()
        if not text:
            raise ValueError(f"the expected value of {name} is empty")
        if len(text) > MAX_VALUE:
            raise ValueError(f"the expected value of {name} is longer than {MAX_VALUE} characters")
        if "]" in text or "\n" in text:
            raise ValueError(
                f"the expected value of {name} holds ']' or a line break, which @{name}[value] "
                "cannot hold"
            )
        out[name] = text
    return out


class ProjectCheckCreate(BaseModel):
    question: str | None = Field(
        None,
        min_length=1,
        max_length=20_000,
        description="The question (taken from the run when from_run_id is given without it)",
    )
    expected: ExpectedIn | None = Field(
        None,
        description="{name: value}: the answer must end with @name[value] for each; a plain "
        "string is the value of `answer`. Taken from the run's final answer when from_run_id "
        "is given without it",
    )
    format: str = Field("", max_length=2_000, description="The answer format asked of the agent")
    from_run_id: uuid.UUID | None = Field(
        None, description="A succeeded run of this project to take the question and answer from"
    )

    @field_validator("expected")
    @classmethod
    def _expected(cls, value: ExpectedIn | None) -> dict[str, str] | None:
        return None if value is None else normalise_expected(value)


class ProjectCheckUpdate(BaseModel):
    question: str | None = Field(None, min_length=1, max_length=20_000)
    expected: ExpectedIn | None = None
    format: str | None = Field(None, max_length=2_000)

    @field_validator("expected")
    @classmethod
    def _expected(cls, value: ExpectedIn | None) -> dict[str, str] | None:
        return None if value is None else normalise_expected(value)


class ProjectCheckOut(Schema):
    id: uuid.UUID
    project_id: uuid.UUID
    question: str
    expected: dict[str, str]
    format: str
    from_run_id: uuid.UUID | None
    created_by: uuid.UUID | None
    created_at: datetime
    updated_at: datetime


class CheckRunCreate(BaseModel):
    model: str | None = Field(
        None, description="One of GET /models (default: the server's default model)"
    )
    attempts: int = Field(1, ge=1, le=5, description="Attempts per question (1 to 5)")


class CheckResultOut(Schema):
    check_id: uuid.UUID | None = Field(description="Null once the check was deleted")
    position: int
    status: CheckResultStatus
    run_id: uuid.UUID | None = Field(description="The run that answered it")
    answer: str | None = Field(description="The run's final answer")
    question: str
    expected: dict[str, str]
    detail: str | None = Field(description="Why it failed or erred, in a sentence")


class CheckRunOut(Schema):
    id: uuid.UUID
    project_id: uuid.UUID
    status: CheckRunStatusName
    model: str
    attempts: int
    session_id: uuid.UUID | None = Field(description="The session its questions were asked in")
    total: int
    passed: int
    failed: int
    errors: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    error: str | None = Field(description="Why it could not go on (status failed)")
    created_by: uuid.UUID | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    results: list[CheckResultOut] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def accuracy(self) -> float | None:
        """passed / total (null with no checks)."""
        return round(self.passed / self.total, 4) if self.total else None
