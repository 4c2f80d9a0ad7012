"""The sections the settings are documented in, and what each field tells the generated
docs (docs/configuration.md, .env.example) beyond its description: `doc`, given to every
field as its `json_schema_extra`.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic.json_schema import JsonDict


class Section(StrEnum):
    """The groups the settings are documented in, in the order the docs show them."""

    server = "Server"
    database = "Database"
    redis = "Redis"
    storage = "Object storage"
    llm = "The model"
    agent = "The agent"
    sandbox = "The sandbox"
    auth = "Accounts and login"
    mail = "Email"
    sso = "Single sign-on"
    uploads = "Uploads"
    sources = "Data sources"
    knowledge = "Project knowledge"
    jobs = "Jobs"
    observability = "Observability"


def doc(
    section: Section,
    *,
    unset: str | None = None,
    compose: str | None = None,
    secret: bool = False,
) -> JsonDict:
    """What the generated docs (docs/configuration.md, .env.example) need beyond a description.

    Args:
        section: the group the setting is listed in.
        unset: what an optional setting (default None) means when it is not set.
        compose: the value docker compose gives it, where that differs from the default.
        secret: the value is a secret; the docs never show one.
    """
    extra: JsonDict = {"section": section.value}
    if unset is not None:
        extra["unset"] = unset
    if compose is not None:
        extra["compose"] = compose
    if secret:
        extra["secret"] = True
    return extra
