"""Sending an alert to a webhook: a JSON body (with a Slack-compatible `text`), signed
`X-Workbench-Signature: sha256=<hex HMAC-SHA256 of the body>` with the webhook's secret,
posted to the address the outbound rules checked (never to the name again, so a DNS answer
that changes after the check changes nothing; TLS still verifies the name)."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from urllib.parse import urlsplit, urlunsplit

import httpx

from app.config import Settings
from app.jobs.deliveries.targets import DeliveryFailed, webhook_address
from app.sources.credentials import Secret

SIGNATURE_HEADER = "X-Workbench-Signature"
# Statuses where the same message later may succeed; any other 4xx is final.
_RETRIED_STATUSES = frozenset({408, 425, 429})


def signature(body: bytes, secret: Secret) -> str:
    """The header's value: `sha256=` and the hex HMAC-SHA256 of the body."""
    digest = hmac.new(secret.reveal().encode(), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def _pinned(url: str, address: str) -> str:
    """`url` with its host replaced by the checked address."""
    parts = urlsplit(url)
    host = f"[{address}]" if ipaddress.ip_address(address).version == 6 else address
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))


async def post_webhook(settings: Settings, url: str, body: bytes, secret: Secret | None) -> int:
    """Post the signed body to the webhook; its status code when it answered 2xx.

    Raises:
        DeliveryFailed: refused by the outbound rules (not retried), or no answer, or an
            answer other than 2xx (retried unless a 4xx says trying again cannot help).
    """
    address = await webhook_address(settings, url)
    parts = urlsplit(url)
    host_header = parts.netloc.rsplit("@", 1)[-1]
    headers = {
        "Content-Type": "application/json",
        "Host": host_header,
        "User-Agent": "Workbench-Alerts/1",
    }
    if secret:
        headers[SIGNATURE_HEADER] = signature(body, secret)
    extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
    timeout = settings.JOBS_WEBHOOK_TIMEOUT_SECONDS
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    try:
        async with httpx.AsyncClient(
            timeout=timeout, follow_redirects=False, trust_env=False
        ) as client:
            response = await client.post(
                _pinned(url, address), content=body, headers=headers, extensions=extensions
            )
    except httpx.TimeoutException:
        raise DeliveryFailed(
            f"The webhook at {where} did not answer within {timeout:g} s."
        ) from None
    except httpx.HTTPError as exc:
        raise DeliveryFailed(
            f"Could not reach the webhook at {where}: {type(exc).__name__}."
        ) from None
    if 200 <= response.status_code < 300:
        return response.status_code
    status = response.status_code
    retry = status >= 500 or status in _RETRIED_STATUSES
    raise DeliveryFailed(
        f"The webhook at {where} answered {status} {response.reason_phrase}.".rstrip(),
        retry=retry,
    )
