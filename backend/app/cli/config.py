"""Where the CLI finds its server and token: the environment first, then the config file.

`WORKBENCH_URL` and `WORKBENCH_TOKEN` win; otherwise `workbench login` has stored both in
`config.json` in the user's config directory (`WORKBENCH_CONFIG_DIR`, else the platform's,
e.g. ~/.config/workbench), written with mode 0600 because it holds a secret.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import click

from app.cli.client import WorkbenchClient
from app.cli.output import Failure

DEFAULT_URL = "http://127.0.0.1:8000"


class NotLoggedIn(Failure):
    def __init__(self) -> None:
        super().__init__(
            "No API token: run `workbench login`, or set WORKBENCH_URL and WORKBENCH_TOKEN."
        )


@dataclass(frozen=True)
class Credentials:
    url: str
    token: str | None
    # The stored token's id on the server, so `workbench logout` can revoke it.
    token_id: str | None = None


def config_dir() -> Path:
    explicit = os.environ.get("WORKBENCH_CONFIG_DIR")
    return Path(explicit) if explicit else Path(click.get_app_dir("workbench"))


def config_path() -> Path:
    return config_dir() / "config.json"


def stored() -> Credentials | None:
    """What `workbench login` stored (the environment aside), or None."""
    try:
        data = json.loads(config_path().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not data.get("url"):
        return None

    def text(key: str) -> str | None:
        return str(data[key]) if data.get(key) else None

    return Credentials(url=str(data["url"]), token=text("token"), token_id=text("token_id"))


def load() -> Credentials:
    """The server and token to use: the environment's, else the stored ones."""
    saved = stored() or Credentials(url=DEFAULT_URL, token=None)
    url = os.environ.get("WORKBENCH_URL") or saved.url
    token = os.environ.get("WORKBENCH_TOKEN") or saved.token
    token_id = saved.token_id if token == saved.token else None
    return Credentials(url=url.rstrip("/"), token=token, token_id=token_id)


def save(url: str, token: str, token_id: str | None = None) -> Path:
    """Store the server and token, readable by this user only (never world-readable, even
    for a moment: the file is created with mode 0600)."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.unlink(missing_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"url": url.rstrip("/"), "token": token, "token_id": token_id}, handle)
    os.replace(temporary, path)
    return path


def forget() -> bool:
    """Remove the stored token; True if there was one."""
    try:
        config_path().unlink()
    except FileNotFoundError:
        return False
    return True


def connect() -> WorkbenchClient:
    """A client for the configured server, with its token (or NotLoggedIn)."""
    credentials = load()
    if not credentials.token:
        raise NotLoggedIn()
    return WorkbenchClient(credentials.url, credentials.token)
