"""Shapes shared by every resource: pages of lists, spending totals, who did something."""

from __future__ import annotations

import uuid
from typing import Generic, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

T = TypeVar("T")


class Schema(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class PersonOut(Schema):
    """A user as the members of a project see one another: who asked, who shared, who did."""

    user_id: uuid.UUID = Field(validation_alias=AliasChoices("user_id", "id"))
    email: str


class UsageTotals(BaseModel):
    """What a session's or project's runs have spent, summed over all of them."""

    # Always present in responses (the defaults are for building one).
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    tokens_in: int = 0
    tokens_out: int = 0
    # Null while no run had a known price (see LLM_PRICES).
    cost_usd: float | None = None


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int
