"""One settings object for the whole backend, read from the environment and `.env`.

Each setting is described once, on its field; `make settings-docs` writes
docs/configuration.md and .env.example from these descriptions. Values are validated at
start-up so that a bad one stops the process with a sentence saying what to fix.

Each section of fields is a module (server, database, redis, storage, llm, agent, sandbox,
auth, uploads, sources, observability) whose class settings.py combines into `Settings`;
sections.py holds the sections and `doc`, what a field tells the docs beyond its description.
"""

from __future__ import annotations

from app.config.llm import ModelPrice
from app.config.observability import LogFormat
from app.config.sandbox import SandboxIsolation
from app.config.sections import Section
from app.config.server import Environment
from app.config.settings import KNOWN_DEFAULT_SECRETS, REPO_ROOT, Settings

__all__ = [
    "KNOWN_DEFAULT_SECRETS",
    "REPO_ROOT",
    "Environment",
    "LogFormat",
    "ModelPrice",
    "SandboxIsolation",
    "Section",
    "Settings",
]
