"""The YAML form of a project's knowledge (`workbench knowledge export` and `import`): items
in a stable order (kind, then title), what each applies to by names (a file's, a source's)
so that the file reads well and diffs cleanly in git, and the plan of an import (what it
creates, updates or leaves)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from app.cli.output import Failure

VERSION = 1
KINDS = ("definition", "rule", "column", "example", "lesson")
FIELDS = ("file", "source", "table", "column")


class _Dumper(yaml.SafeDumper):
    """Block style (`|`) for text of several lines, so bodies read as they were written."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def _order(item: dict[str, Any]) -> tuple[int, str, str]:
    kind = item["kind"]
    return (KINDS.index(kind) if kind in KINDS else len(KINDS), item["title"], item["id"])


def dump(
    project: str, items: list[dict[str, Any]], files: dict[str, str], sources: dict[str, str]
) -> str:
    """The items as YAML; `files` and `sources` name the ids their targets hold."""
    entries = []
    for item in sorted(items, key=_order):
        entry: dict[str, Any] = {"kind": item["kind"], "title": item["title"]}
        target = item.get("applies_to") or {}
        named = {
            "file": files.get(target.get("file_id") or "", target.get("file_id")),
            "source": sources.get(target.get("source_id") or "", target.get("source_id")),
            "table": target.get("table"),
            "column": target.get("column"),
        }
        if any(named.values()):
            entry["applies_to"] = {k: v for k, v in named.items() if v}
        entry["body"] = item["body"].replace("\r\n", "\n")
        entries.append(entry)
    header = f"# The knowledge of the project {project!r}: workbench knowledge import reads it.\n"
    document = {"version": VERSION, "items": entries}
    body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return header + body


def load(text: str) -> list[dict[str, Any]]:
    """The items of an exported file, checked for their shape (not their content: the
    server does that)."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise Failure(f"The file is not YAML: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        raise Failure("The file has no `items:` list (is it a `workbench knowledge export`?).")
    if document.get("version", VERSION) != VERSION:
        raise Failure(f"The file is of version {document['version']}; this workbench reads 1.")
    items = []
    for number, entry in enumerate(document["items"], 1):
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(k), str) for k in ("kind", "title", "body")
        ):
            raise Failure(f"Item {number} needs `kind`, `title` and `body` (text).")
        target = entry.get("applies_to") or {}
        if not isinstance(target, dict) or set(target) - set(FIELDS):
            raise Failure(f"Item {number}'s `applies_to` may name only {', '.join(FIELDS)}.")
        items.append({**entry, "applies_to": {k: str(v) for k, v in target.items() if v}})
    return items


@dataclass
class Plan:
    """What an import does: each (kind, title) is created, updated or left as it is."""

    create: list[dict[str, Any]] = field(default_factory=list)
    update: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (item id, fields)
    same: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # (entry, why)


def resolve(
    entry: dict[str, Any], files: dict[str, str], sources: dict[str, str]
) -> dict[str, Any] | str:
    """The entry's `applies_to` by ids in the project importing it, or why it cannot be."""
    named = entry["applies_to"]
    target: dict[str, Any] = {}
    for key, ids in (("file", files), ("source", sources)):
        if key in named:
            if named[key] not in ids:
                return f"this project has no {key} named {named[key]}"
            target[f"{key}_id"] = ids[named[key]]
    for key in ("table", "column"):
        if key in named:
            target[key] = named[key]
    return target


def plan(
    entries: list[dict[str, Any]],
    existing: list[dict[str, Any]],
    files: dict[str, str],
    sources: dict[str, str],
) -> Plan:
    by_key = {(i["kind"], i["title"]): i for i in sorted(existing, key=lambda i: i["created_at"])}
    done = Plan()
    for entry in entries:
        target = resolve(entry, files, sources)
        if isinstance(target, str):
            done.skipped.append((entry, target))
            continue
        fields = {"body": entry["body"], "applies_to": target or None}
        found = by_key.get((entry["kind"], entry["title"]))
        if found is None:
            done.create.append({"kind": entry["kind"], "title": entry["title"], **fields})
            continue
        now = {k: v for k, v in (found.get("applies_to") or {}).items() if v}
        changes: dict[str, Any] = {}
        if found["body"] != entry["body"].strip():
            changes["body"] = entry["body"]
        if now != {k: v for k, v in target.items() if v} and not (
            "table" in target and now.get("table", "").endswith(f".{target['table']}")
        ):
            changes["applies_to"] = target or None
        if found["status"] != "approved":
            changes["status"] = "approved"
        if changes:
            done.update.append((found["id"], changes))
        else:
            done.same.append(found)
    return done
