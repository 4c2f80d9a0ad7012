"""Webhook secrets at rest: sealed as source passwords are (app.sources.credentials: AES-GCM
under a key derived from SECRET_KEY, bound to the job's id), shown as `***`, and opened only
to sign a message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.jobs.alerts import Alert, InvalidAlert, WebhookDelivery
from app.sources.credentials import MASK, Keyring, Secret


def _stored_secrets(previous: Sequence[dict[str, Any]] | None) -> dict[str, str]:
    """The sealed secret of each webhook URL the job had."""
    found: dict[str, str] = {}
    for alert in previous or []:
        for target in alert.get("deliver", []):
            if target.get("channel") == "webhook" and target.get("secret_sealed"):
                found.setdefault(target["url"], target["secret_sealed"])
    return found


def seal_alerts(
    alerts: Sequence[Alert],
    keyring: Keyring,
    job_id: str,
    previous: Sequence[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The alerts as the job stores them: each webhook's secret sealed. A webhook given no
    secret (or `***`, as it was shown) keeps the one its URL had before.

    Raises:
        InvalidAlert: a new webhook URL came without a secret.
    """
    kept = _stored_secrets(previous)
    stored = []
    for number, alert in enumerate(alerts, 1):
        targets = []
        for target in alert.deliver:
            data = target.model_dump(exclude_none=True, exclude={"secret", "secret_sealed"})
            if isinstance(target, WebhookDelivery):
                given = target.secret if target.secret not in (None, MASK) else None
                if given is not None:
                    data["secret_sealed"] = keyring.seal(Secret(given), job_id)
                elif target.secret_sealed or target.url in kept:
                    data["secret_sealed"] = target.secret_sealed or kept[target.url]
                else:
                    raise InvalidAlert(
                        f"alert {number}: the webhook {target.url} needs a `secret` (at least "
                        "16 characters): its messages are signed with it."
                    )
            targets.append(data)
        stored.append(
            {**alert.model_dump(exclude_none=True, exclude={"deliver"}), "deliver": targets}
        )
    return stored


def public_alerts(stored: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The alerts as any API output shows them: a webhook's secret as `***`."""
    shown = []
    for alert in stored or []:
        targets = []
        for target in alert.get("deliver", []):
            data = {k: v for k, v in target.items() if k != "secret_sealed"}
            if target.get("secret_sealed"):
                data["secret"] = MASK
            targets.append(data)
        shown.append({**alert, "deliver": targets})
    return shown


def open_secret(keyring: Keyring, sealed: str | None, job_id: str) -> Secret | None:
    """The webhook's secret, to sign with (None: there is none)."""
    return keyring.open(sealed, job_id) if sealed else None
