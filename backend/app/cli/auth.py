"""`workbench login`, `logout` and `whoami`: the API token the other commands use."""

from __future__ import annotations

import os
import socket
import sys
from typing import Annotated

import typer
from rich.text import Text

from app.cli import config
from app.cli.client import ApiError, WorkbenchClient
from app.cli.output import Failure, err, out, print_json


def _read(prompt: str, *, hide: bool) -> str:
    """A value typed at the terminal, or the next line of stdin when it is not one."""
    if not sys.stdin.isatty():
        line = sys.stdin.readline()
        if not line:
            raise Failure(f"Expected the {prompt.lower()} on stdin.")
        return line.rstrip("\r\n")
    return str(typer.prompt(prompt, hide_input=hide))


def login(
    url: Annotated[
        str | None,
        typer.Option(help="The workbench's address.", show_default="the stored one, else local"),
    ] = None,
    email: Annotated[str | None, typer.Option(help="Your email.", show_default="asked")] = None,
) -> None:
    """Log in with your email and password, and store an API token for the other commands.

    The token is stored with the address in config.json in the user's config directory
    ($WORKBENCH_CONFIG_DIR to choose another), readable by you only. When stdin is not a
    terminal, the email and password are read from its first lines.
    """
    address = (url or config.load().url).rstrip("/")
    email = email or _read("Email", hide=False)
    password = _read("Password", hide=True)
    with WorkbenchClient(address) as anonymous:
        session_token = anonymous.login(email.strip(), password)
    with WorkbenchClient(address, session_token) as client:
        created = client.create_token(f"workbench CLI on {socket.gethostname()}")
        user = client.me()
    path = config.save(address, created["token"], str(created["id"]))
    out.print(f"Logged in to {address} as {user['email']}.")
    err.print(Text(f"The API token is stored in {path}.", style="dim"))
    if os.environ.get("WORKBENCH_TOKEN"):
        err.print(Text("WORKBENCH_TOKEN is set, and wins over the stored token.", style="yellow"))


def logout() -> None:
    """Forget the stored token, and revoke it on the server when it can be reached."""
    stored = config.stored()
    if stored is None or not stored.token:
        out.print("Not logged in: there is no stored token.")
        return
    revoked, reason = False, ""
    try:
        with WorkbenchClient(stored.url, stored.token) as client:
            token_id = stored.token_id or next(
                (t["id"] for t in client.tokens() if stored.token.startswith(t["prefix"])), None
            )
            if token_id:
                client.revoke_token(token_id)
                revoked = True
    except ApiError as exc:
        reason = str(exc)
    config.forget()
    if revoked:
        out.print(f"Logged out of {stored.url}: the token is revoked and forgotten.")
    else:
        out.print("Logged out: the token is forgotten.")
        if reason:
            err.print(Text(f"It could not be revoked on the server: {reason}", style="yellow"))
    if os.environ.get("WORKBENCH_TOKEN"):
        err.print(Text("WORKBENCH_TOKEN is still set in this shell.", style="yellow"))


def whoami(
    as_json: Annotated[bool, typer.Option("--json", help="Print the user as JSON.")] = False,
) -> None:
    """Who the token belongs to, and on which server."""
    with config.connect() as client:
        user = client.me()
        if as_json:
            print_json({**user, "url": client.url})
            return
        role = " (admin)" if user.get("is_admin") else ""
        out.print(f"{user['email']}{role} on {client.url}")
