"""A job's alerts: conditions on its named results and on how its run went, each with where
to deliver it (API.md: `{when, result?, value?, deliver: [...]}`), checked when they are
set, and evaluated after a run into sentences that say what happened.

`when`:
- `above` / `below`: the result is above / below `value`;
- `change_pct`: the result changed by at least `value` per cent since the last run, upwards
  for a positive `value` (10: rose 10% or more), downwards for a negative one (-10: fell
  10% or more);
- `changed`: the result (a value, a list, a table's rows) is not what it was last run;
- `check_failed`: one of the job's checks failed (`result`, if given, names the check);
- `failed`: the run failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from app.auth.schemas import normalise_email
from app.errors import Unprocessable
from app.jobs.compare import is_number
from app.jobs.deliveries.targets import check_webhook_url_form
from app.sources.credentials import MASK

MAX_ALERTS = 20
MAX_DELIVERIES = 10
MAX_RECIPIENTS = 20
MIN_SECRET_LENGTH = 16
# The minus sign (U+2212) of a falling change in sentences ("the -10% alert" typeset).
MINUS = "\u2212"
NEEDS_VALUE = ("above", "below", "change_pct")
NEEDS_RESULT = ("above", "below", "change_pct", "changed")


class InvalidAlert(Unprocessable):
    """An alert that cannot be used: the sentence says which one and why."""

    code = "invalid_alert"


class EmailDelivery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    channel: Literal["email"]
    to: list[str] = Field(min_length=1, max_length=MAX_RECIPIENTS)

    @field_validator("to")
    @classmethod
    def _addresses(cls, value: list[str]) -> list[str]:
        for address in value:
            if any(c in address for c in ',;<>"'):
                raise ValueError(f"{address!r} is not a valid email address (one address each)")
        return list(dict.fromkeys(normalise_email(address) for address in value))


class WebhookDelivery(BaseModel):
    """A webhook. `secret` signs its messages (HMAC-SHA256); it is written, never read back:
    stored sealed, shown as `***`."""

    model_config = ConfigDict(extra="forbid")

    channel: Literal["webhook"]
    url: str = Field(min_length=1, max_length=2000)
    secret: str | None = Field(None, max_length=500)
    # The secret as stored (app.jobs.deliveries.secrets); never taken from a client.
    secret_sealed: SkipJsonSchema[str | None] = Field(None, exclude=True)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_webhook_url_form(value)

    @field_validator("secret_sealed")
    @classmethod
    def _stored_only(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not (info.context or {}).get("stored"):
            raise ValueError("`secret_sealed` is not something to send; give `secret`")
        return value

    @field_validator("secret")
    @classmethod
    def _long_enough(cls, value: str | None) -> str | None:
        if value is not None and value != MASK and len(value) < MIN_SECRET_LENGTH:
            raise ValueError(
                f"a webhook's secret has at least {MIN_SECRET_LENGTH} characters (it signs "
                "the messages so that the receiver can tell they are the workbench's)"
            )
        return value


class ShareDelivery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    channel: Literal["share"]


Delivery = Annotated[
    EmailDelivery | WebhookDelivery | ShareDelivery, Field(discriminator="channel")
]


class Alert(BaseModel):
    """One alert: a condition and where to deliver it."""

    model_config = ConfigDict(extra="forbid")

    when: Literal["above", "below", "change_pct", "changed", "check_failed", "failed"]
    result: str | None = Field(None, max_length=200)
    value: float | None = None
    deliver: list[Delivery] = Field(min_length=1, max_length=MAX_DELIVERIES)

    @model_validator(mode="after")
    def _complete(self) -> Alert:
        if self.when in NEEDS_RESULT and not self.result:
            raise ValueError(f"a `{self.when}` alert needs `result`: the result it watches")
        if self.when in NEEDS_VALUE and self.value is None:
            raise ValueError(f"a `{self.when}` alert needs `value`: the number to compare with")
        if self.when == "change_pct" and self.value == 0:
            raise ValueError(
                "a `change_pct` alert's `value` is a change in per cent, positive for a rise "
                "(10: up 10% or more) or negative for a fall (-10); not 0"
            )
        if self.when not in NEEDS_VALUE and self.value is not None:
            raise ValueError(f"a `{self.when}` alert takes no `value`")
        return self


_ALERTS = TypeAdapter(list[Alert])


def _where(error: Mapping[str, Any]) -> str:
    location = [str(part) for part in error.get("loc", ())]
    if location and location[0].isdigit():
        head = f"alert {int(location[0]) + 1}"
        rest = [part for part in location[1:] if part not in ("email", "webhook", "share")]
        return head + (f" ({'.'.join(rest)})" if rest else "")
    return "alerts"


def load_alerts(stored: object) -> list[Alert]:
    """A job's alerts as stored (webhook secrets sealed), read back."""
    return _ALERTS.validate_python(stored or [], context={"stored": True})


def validate_alerts(raw: object, result_names: Iterable[str] | None = None) -> list[Alert]:
    """The alerts a client sent, checked; with `result_names`, each alert's result must be
    one of them. Store them with app.jobs.deliveries.secrets.seal_alerts.

    Raises:
        InvalidAlert: the first problem found, as a sentence naming the alert.
    """
    try:
        alerts = _ALERTS.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first.get("msg", "is not valid")).removeprefix("Value error, ")
        raise InvalidAlert(f"{_where(first)}: {message}.") from None
    if len(alerts) > MAX_ALERTS:
        raise InvalidAlert(f"A job has at most {MAX_ALERTS} alerts; {len(alerts)} were given.")
    if result_names is not None:
        names = list(result_names)
        for number, alert in enumerate(alerts, 1):
            if alert.when in NEEDS_RESULT and alert.result not in names:
                known = ", ".join(names) or "none"
                raise InvalidAlert(
                    f"alert {number}: this job has no result named {alert.result!r} "
                    f"(its results: {known})."
                )
    return alerts


@dataclass(frozen=True)
class Triggered:
    """An alert that holds after a run, and the sentence that says why."""

    alert: Alert
    index: int
    sentence: str


def number_text(value: object) -> str:
    """48210 → "48,210"; 0.1234 → "0.12"; other values as they are (cut short)."""
    if is_number(value):
        assert isinstance(value, int | float)
        if float(value).is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        text = f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4g}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "…"


def _signed(value: float) -> str:
    return ("+" if value > 0 else MINUS) + number_text(abs(value))


def _held(
    alert: Alert,
    status: str,
    error: str | None,
    results: Mapping[str, Any],
    change: Mapping[str, Mapping[str, Any]] | None,
    checks: Sequence[Mapping[str, Any]],
) -> str | None:
    """The sentence when the alert holds, else None."""
    if alert.when == "failed":
        return f"The run failed: {error}" if status == "failed" else None
    if alert.when == "check_failed":
        failing = [
            c for c in checks if not c.get("passed") and alert.result in (None, c.get("name"))
        ]
        if not failing:
            return None
        said = "; ".join(f"{c.get('name')}: {c.get('message') or 'failed'}" for c in failing)
        return f"{len(failing)} check(s) failed — {said}"
    if status != "succeeded":
        return None
    name = alert.result or ""
    value = results.get(name)
    limit = alert.value or 0.0
    if alert.when in ("above", "below"):
        if not is_number(value):
            return None
        assert isinstance(value, int | float)
        holds = value > limit if alert.when == "above" else value < limit
        return (
            f"{name} is {number_text(value)}, {alert.when} the {number_text(limit)} alert."
            if holds
            else None
        )
    entry = (change or {}).get(name)
    if entry is None or (entry.get("before") is None and "rows_added" not in entry):
        return None  # the first run: nothing to compare with
    if alert.when == "change_pct":
        pct = entry.get("pct")
        if pct is None or not (pct >= limit if limit > 0 else pct <= limit):
            return None
        moved = "rose" if pct > 0 else "fell"
        side = "above" if limit > 0 else "below"
        return (
            f"{name} {moved} {number_text(round(abs(pct), 1))}% since the last run "
            f"({number_text(entry.get('before'))} → {number_text(entry.get('after'))}), "
            f"{side} the {_signed(limit)}% alert."
        )
    if not entry.get("changed"):
        return None
    if "rows_added" in entry and entry.get("rows_added") is not None:
        return (
            f"{name} changed since the last run ({entry['rows_added']} row(s) added, "
            f"{entry['rows_removed']} removed; {number_text(entry.get('after'))} rows now)."
        )
    return (
        f"{name} changed since the last run ({number_text(entry.get('before'))} → "
        f"{number_text(entry.get('after'))})."
    )


def evaluate(
    alerts: Sequence[Alert],
    run_outcome: str,
    results: Mapping[str, Any],
    change: Mapping[str, Mapping[str, Any]] | None,
    checks: Sequence[Mapping[str, Any]] = (),
    *,
    error: str | None = None,
) -> list[Triggered]:
    """The alerts that hold after a run, each with its sentence.

    Args:
        alerts: the job's alerts (validate_alerts).
        run_outcome: the run's status (succeeded, failed, skipped); a skipped run alerts
            on nothing.
        results: the run's named results.
        change: compare(previous, results), or None on the job's first run (then no
            change alert holds).
        checks: the run's checks, `[{name, passed, message}]`.
        error: the run's error sentence, when it failed.
    """
    triggered = []
    for index, alert in enumerate(alerts):
        if run_outcome == "skipped":
            continue
        sentence = _held(alert, run_outcome, error, results, change, checks)
        if sentence is not None:
            triggered.append(Triggered(alert, index, sentence))
    return triggered
