"""Alert webhooks against hostile URLs (issue 45): a webhook is a way to make the server send
requests, so its URL obeys the sources' outbound rules. Never the workbench itself (its API,
database, Redis, object store), never link-local or cloud-metadata addresses, never a
redirect followed, and the operator's allow-list holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import Settings
from app.jobs.deliveries.targets import DeliveryFailed, webhook_address
from app.jobs.deliveries.webhook import post_webhook
from app.sources.credentials import Secret
from tests.conftest import stack_settings
from tests.jobs.receivers import WebhookReceiver

APP_PORT = 8765


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    made = WebhookReceiver()
    yield made
    made.close()


def settings_for(tmp_path: Path, **more: object) -> Settings:
    return stack_settings("embedded", tmp_path, HOST="0.0.0.0", PORT=APP_PORT, **more)


async def refused(settings: Settings, url: str) -> DeliveryFailed:
    with pytest.raises(DeliveryFailed) as caught:
        await post_webhook(settings, url, b"{}", Secret("whsec-0123456789-abc"))
    assert caught.value.retry is False  # a refusal is final: no attempt is made again
    return caught.value


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[fe80::1]:80/x",
        "http://[::ffff:169.254.169.254]/",
        "http://100.100.100.200/latest/meta-data",
    ],
)
async def test_cloud_metadata_and_link_local_addresses_are_refused(
    tmp_path: Path, url: str
) -> None:
    failure = await refused(settings_for(tmp_path), url)
    assert "link-local or cloud-metadata address, which webhooks may not reach" in failure.sentence


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
async def test_the_workbench_itself_is_refused(tmp_path: Path, host: str) -> None:
    failure = await refused(settings_for(tmp_path), f"http://{host}:{APP_PORT}/api/v1/users")
    assert failure.sentence.endswith(
        f":{APP_PORT} is the workbench itself (its server, database, Redis or object store), "
        "which webhooks may not reach unless SOURCES_ALLOWED_HOSTS names it explicitly."
    )


async def test_the_unspecified_address_is_refused(tmp_path: Path) -> None:
    failure = await refused(settings_for(tmp_path), f"http://0.0.0.0:{APP_PORT}/")
    assert failure.sentence == f"0.0.0.0:{APP_PORT} is not an address a webhook can use."


async def test_the_workbench_s_own_database_and_redis_are_refused(
    tmp_path: Path, postgres_url: str, redis_url: str
) -> None:
    settings = settings_for(tmp_path, DATABASE_URL=postgres_url, REDIS_URL=redis_url)
    for url in ("http://127.0.0.1:5432/", "http://localhost:6379/"):
        assert "is the workbench itself" in (await refused(settings, url)).sentence


async def test_the_operator_s_allow_list_holds(tmp_path: Path, receiver: WebhookReceiver) -> None:
    settings = settings_for(tmp_path, SOURCES_ALLOWED_HOSTS="hooks.example.com")
    failure = await refused(settings, receiver.url)
    assert failure.sentence == (
        f"The workbench's operator does not allow webhooks to 127.0.0.1:{receiver.port} "
        "(SOURCES_ALLOWED_HOSTS)."
    )
    assert receiver.requests == []
    # Named explicitly, the same receiver is reached.
    allowed = settings_for(tmp_path, SOURCES_ALLOWED_HOSTS=f"127.0.0.1:{receiver.port}")
    assert await post_webhook(allowed, receiver.url, b"{}", None) == 200
    assert await webhook_address(allowed, receiver.url) == "127.0.0.1"


async def test_a_redirect_is_not_followed(tmp_path: Path, receiver: WebhookReceiver) -> None:
    receiver.statuses = [302]
    failure = await refused(settings_for(tmp_path), receiver.url)
    assert failure.sentence == f"The webhook at 127.0.0.1:{receiver.port} answered 302 Found."
    assert len(receiver.requests) == 1


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "gopher://127.0.0.1:6379/_FLUSHALL",
        "http://user:pw@hooks.example.com/",
    ],
)
async def test_urls_that_are_not_plain_http_are_refused(tmp_path: Path, url: str) -> None:
    failure = await refused(settings_for(tmp_path), url)
    assert failure.sentence.startswith("The webhook URL cannot be used:")
