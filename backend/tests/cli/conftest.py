"""Fixtures of `workbench eval`'s tests: the command run against the live server with a
token of Alice's, and the scripted LLM set to play a task set."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from app.cli.evaluate import eval_command
from tests.conftest import Api
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer


def eval_cli() -> typer.Typer:
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("eval")(eval_command)
    return app


@pytest.fixture
def player(llm: ScriptedLLM) -> Iterator[Callable[[Callable[..., str]], None]]:
    def play(responder: Callable[..., str]) -> None:
        llm.responder = responder

    yield play
    llm.responder = None


@pytest.fixture
def run_eval(live: LiveServer, alice: Api, tmp_path: Path) -> Callable[..., Result]:
    """`workbench eval ARGS…` as Alice, with `env` added to its environment."""
    response = alice.post("/auth/tokens", json={"name": "eval"})
    assert response.status_code == 201, response.text
    base = {
        "WORKBENCH_URL": live.url,
        "WORKBENCH_TOKEN": response.json()["token"],
        "WORKBENCH_CONFIG_DIR": str(tmp_path / "config"),
    }

    def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
        return CliRunner().invoke(
            eval_cli(), ["eval", *args], env={**base, **(env or {})}, catch_exceptions=False
        )

    return invoke
