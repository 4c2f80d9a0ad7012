"""Model settings: the default model and those users may pick, its server and key, the
limits of one reply, retries, and prices LiteLLM lacks.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_settings import NoDecode

from app.config.sections import Section, doc


class ModelPrice(BaseModel):
    """A model's price in USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class LlmSettings(BaseModel):
    """Section "The model": which models, where, and the bounds of a reply."""

    LLM_MODEL: str | None = Field(
        None,
        description="The model the agent uses by default, in LiteLLM's `provider/model` form, "
        "e.g. `openrouter/anthropic/claude-3.5-sonnet`, or `openai/<name>` with "
        "`LLM_API_BASE`.",
        examples=["openrouter/anthropic/claude-sonnet-4"],
        json_schema_extra=doc(
            Section.llm, unset="no model, and questions are refused saying how to set one"
        ),
    )
    LLM_API_BASE: str | None = Field(
        None,
        description="Base URL of an OpenAI-compatible API for the model (e.g. a local server).",
        examples=["http://localhost:11434/v1"],
        json_schema_extra=doc(Section.llm, unset="the provider's own"),
    )
    LLM_API_KEY: str | None = Field(
        None,
        description="API key sent with the model's requests.",
        json_schema_extra=doc(
            Section.llm,
            unset="LiteLLM uses the provider's key (`OPENROUTER_API_KEY`, `OPENAI_API_KEY`, …)",
            secret=True,
        ),
    )
    LLM_MODELS: Annotated[list[str], NoDecode] = Field(
        [],
        description="Comma-separated models users may choose from as well, per question "
        "(`LLM_MODEL` comes first).",
        examples=["openrouter/anthropic/claude-sonnet-4,openrouter/openai/gpt-4o"],
        json_schema_extra=doc(Section.llm),
    )
    LLM_TIMEOUT_SECONDS: float = Field(
        120,
        gt=0,
        description="The longest one model reply may take: in total (a reply still going is "
        "cut and its step fails with a step error the model reads, and it goes on) and "
        "between two of its pieces (the call fails, saying the server timed out).",
        json_schema_extra=doc(Section.llm),
    )
    LLM_MAX_OUTPUT_TOKENS: int = Field(
        4096,
        ge=64,
        description="The most tokens one reply may have (sent as `max_tokens`); a reply cut "
        "by it before its code is complete is a step error. Raise it for models that reason "
        "at length first.",
        json_schema_extra=doc(Section.llm),
    )
    LLM_CONTEXT_TOKENS: int | None = Field(
        None,
        ge=1024,
        description="The model's context window in tokens, for a model LiteLLM does not know "
        "(a local server: the server's own context size). Prompts are kept inside it, and a "
        "conversation that no longer fits ends saying so instead of looping.",
        examples=[8192],
        json_schema_extra=doc(Section.llm, unset="LiteLLM's model list"),
    )
    LLM_MAX_RETRIES: int = Field(
        2,
        ge=0,
        le=10,
        description="Quick retries of a failed model call (rate limit, server error, timeout) "
        "before the run fails.",
        json_schema_extra=doc(Section.llm),
    )
    LLM_PRICES: dict[str, ModelPrice] = Field(
        {},
        description="Prices of models LiteLLM's list lacks (local or unlisted), in USD per "
        "million tokens, as JSON; they also override LiteLLM's. Costs and USD budgets use "
        "them; unknown models cost nothing shown.",
        examples=['{"openai/my-local-model": {"input": 0.5, "output": 1.5}}'],
        json_schema_extra=doc(Section.llm),
    )

    @field_validator("LLM_MODELS", mode="before")
    @classmethod
    def _split_models(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @property
    def llm_models(self) -> list[str]:
        """The models users may pick: LLM_MODEL first, then LLM_MODELS, without repeats."""
        models = [self.LLM_MODEL] if self.LLM_MODEL else []
        return models + [m for m in self.LLM_MODELS if m not in models]
