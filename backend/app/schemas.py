"""Shapes shared by every resource: pages of lists, spending totals."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")


class Schema(BaseModel):
    model_config = ConfigDict(from_attributes=True)


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
