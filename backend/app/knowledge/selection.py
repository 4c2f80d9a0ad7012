"""Which of a project's approved knowledge items the agent is given with a question.

Every `rule` goes in. The other kinds (definition, column, example, lesson) are ranked by
how well their title and body match the question (BM25 over words), boosted when they apply
to a file the question was pinned to, or to a file or source of the project (an item whose
file or source was deleted is left out). They fill the prompt's token budget in that order;
the relevant items that did not fit are named, not shown. A source's `column` items are its
data dictionary, which the prompt already shows with the source's tables (sources_prompt.py):
they are not given twice.

A project's items are read once and kept, indexed, in a bounded per-process cache; each
selection first asks the database for the project's version of its items (how many there
are and when one last changed: one indexed query), so an edit on any replica is seen by the
next question on every replica. A project with no items costs that one query and nothing
else.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections import Counter, OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.knowledge.service import estimate_tokens
from app.models import DataSource, KnowledgeItem, KnowledgeKind, KnowledgeStatus

# Projects whose indexed items a process keeps.
CACHE_PROJECTS = 64
# Relevant items that did not fit, named in the prompt (the rest are counted).
MAX_NAMED = 20
# The best-scored items considered for the prompt (the rest of the relevant are counted).
_RANKED = 500
# BM25's parameters, and the boosts of what an item applies to.
_K1 = 1.2
_B = 0.75
_TITLE_WEIGHT = 2
_PINNED_BOOST = 3.0
_IN_PLAY_BOOST = 1.0
_WORD = re.compile(r"[a-z0-9_]+")
_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be by for from how in is it of on or the to was what which with "
        "per all each who when where why do does did many much than this that these those",
    )
)


def words(text: str) -> list[str]:
    """The words of a text as matching counts them: lower case, plurals made singular, no
    stop words; an identifier (net_revenue) counts whole and by its parts."""
    out = []
    for word in _WORD.findall(text.lower()):
        if word in _STOP or len(word) < 2:
            continue
        out.append(_singular(word))
        if "_" in word:
            out.extend(_singular(p) for p in word.split("_") if len(p) > 1 and p not in _STOP)
    return out


@functools.lru_cache(maxsize=65536)
def _singular(word: str) -> str:
    """refunds → refund, sales → sale (but not class, status or analysis)."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass(frozen=True)
class Candidate:
    """An approved item as selection sees it."""

    id: uuid.UUID
    kind: str
    title: str
    body: str
    file_id: uuid.UUID | None
    source_id: uuid.UUID | None
    table: str | None
    column: str | None
    tokens: int


@dataclass
class ProjectIndex:
    """A project's approved items, indexed for ranking (built once per version)."""

    version: tuple[int, datetime | None]
    rules: list[Candidate] = field(default_factory=list)
    others: list[Candidate] = field(default_factory=list)
    # Each word's items (indexes into `others`) and their BM25 weights for it.
    postings: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    by_file: dict[uuid.UUID, list[int]] = field(default_factory=dict)
    by_source: dict[uuid.UUID, list[int]] = field(default_factory=dict)
    has_sources: bool = False  # some item applies to a source

    @classmethod
    def build(cls, version: tuple[int, datetime | None], items: list[Candidate]) -> ProjectIndex:
        """Index the items: each word's items with their BM25 weight for it, computed once
        (a question's score of an item is the sum of its words' weights)."""
        index = cls(version)
        vocabulary: dict[str, int] = {}
        word_ids: list[int] = []  # one entry per (item, distinct word) …
        item_ids: list[int] = []
        counts: list[int] = []  # … with how often the word is in the item
        for item in items:
            if item.kind == KnowledgeKind.column and item.source_id is not None:
                continue  # a source's data dictionary: the prompt shows it with the source
            index.has_sources = index.has_sources or item.source_id is not None
            if item.kind == KnowledgeKind.rule:
                index.rules.append(item)
                continue
            n = len(index.others)
            index.others.append(item)
            counted = Counter(words(item.title) * _TITLE_WEIGHT + words(item.body))
            word_ids.extend(vocabulary.setdefault(w, len(vocabulary)) for w in counted)
            counts.extend(counted.values())
            item_ids.extend([n] * len(counted))
            if item.file_id is not None:
                index.by_file.setdefault(item.file_id, []).append(n)
            if item.source_id is not None:
                index.by_source.setdefault(item.source_id, []).append(n)
        if not word_ids:
            return index
        word = np.array(word_ids, dtype=np.int64)
        of = np.array(item_ids, dtype=np.int64)
        tf = np.array(counts, dtype=np.float64)
        total = len(index.others)
        lengths = np.bincount(of, weights=tf, minlength=total)
        df = np.bincount(word, minlength=len(vocabulary)).astype(np.float64)
        idf = np.log(1 + (total - df + 0.5) / (df + 0.5))
        scale = _K1 * (1 - _B + _B * lengths / (lengths.mean() or 1.0))
        weight = idf[word] * tf * (_K1 + 1) / (tf + scale[of])
        order = np.argsort(word, kind="stable")
        bounds = np.flatnonzero(np.diff(word[order])) + 1
        names = list(vocabulary)
        for group in np.split(order, bounds):
            index.postings[names[int(word[group[0]])]] = (of[group], weight[group])
        return index

    def scores(self, question: str, in_play: set[uuid.UUID], pinned: set[uuid.UUID]) -> np.ndarray:
        """Each of `others`' score for the question (0: not relevant)."""
        scores = np.zeros(len(self.others))
        for word in set(words(question)):
            if word in self.postings:
                items, weights = self.postings[word]
                scores[items] += weights  # an item appears once in a word's posting
        for target in in_play:
            boost = _PINNED_BOOST if target in pinned else _IN_PLAY_BOOST
            for by in (self.by_file, self.by_source):
                if target in by:
                    scores[by[target]] += boost
        return scores


@dataclass(frozen=True)
class Selection:
    """What the agent is given: the items shown (rules first, in prompt order), and the
    titles of the relevant items that did not fit with how many more there were."""

    shown: list[Candidate] = field(default_factory=list)
    not_shown: list[str] = field(default_factory=list)
    more_not_shown: int = 0
    source_names: dict[uuid.UUID, str] = field(default_factory=dict)  # of the shown items


class KnowledgeSelector:
    """Selects a question's items; keeps each project's index while its version holds."""

    def __init__(self, projects: int = CACHE_PROJECTS):
        self._cache: OrderedDict[uuid.UUID, ProjectIndex] = OrderedDict()
        self._projects = projects

    async def select(
        self,
        db: AsyncSession,
        project_id: uuid.UUID,
        question: str,
        budget: int,
        file_ids: set[uuid.UUID],
        pinned: set[uuid.UUID] = frozenset(),  # type: ignore[assignment]
    ) -> Selection:
        """The items for `question` within `budget` tokens (rules always).

        Args:
            file_ids: The project's files now (items of other files were deleted with them).
            pinned: The files the question was pinned to.
        """
        index = await self._index(db, project_id)
        if index is None:
            return Selection()
        sources: dict[uuid.UUID, str] = {}
        if index.has_sources:  # which of the project's sources still exist
            rows = await db.execute(
                select(DataSource.id, DataSource.name).where(DataSource.project_id == project_id)
            )
            sources = {source_id: name for source_id, name in rows}
        chosen = choose(index, question, budget, file_ids, pinned, set(sources))
        return replace(chosen, source_names=sources)

    def cached(self, project_id: uuid.UUID) -> ProjectIndex | None:
        """The project's index as kept now (not checked against the database)."""
        return self._cache.get(project_id)

    def forget(self, project_id: uuid.UUID) -> None:
        self._cache.pop(project_id, None)

    async def _index(self, db: AsyncSession, project_id: uuid.UUID) -> ProjectIndex | None:
        count, changed = (
            await db.execute(
                select(func.count(), func.max(KnowledgeItem.updated_at)).where(
                    KnowledgeItem.project_id == project_id
                )
            )
        ).one()
        if not count:
            self._cache.pop(project_id, None)
            return None
        version = (int(count), changed)
        index = self._cache.get(project_id)
        if index is not None and index.version == version:
            self._cache.move_to_end(project_id)
            return index
        # Only the columns used, as rows (not ORM objects): reading 10,000 items is most of
        # an index's making. The same items as service.approved_for_prompt, in its order.
        rows = await db.execute(
            select(*_COLUMNS)
            .where(
                KnowledgeItem.project_id == project_id,
                KnowledgeItem.status == KnowledgeStatus.approved,
            )
            .order_by(KnowledgeItem.created_at, KnowledgeItem.id)
        )
        index = ProjectIndex.build(version, [_candidate(*row) for row in rows])
        self._cache[project_id] = index
        self._cache.move_to_end(project_id)
        while len(self._cache) > self._projects:
            self._cache.popitem(last=False)
        return index


def choose(
    index: ProjectIndex,
    question: str,
    budget: int,
    file_ids: set[uuid.UUID],
    pinned: set[uuid.UUID],
    source_ids: set[uuid.UUID],
) -> Selection:
    """Rules first, then the ranked relevant items while they fit the budget; the next
    ones named, the rest counted."""
    shown = [rule for rule in index.rules if _alive(rule, file_ids, source_ids)]
    left = budget - sum(item.tokens for item in shown)
    in_play = (file_ids | source_ids) & (set(index.by_file) | set(index.by_source))
    scores = index.scores(question, in_play, pinned & file_ids)
    relevant = np.flatnonzero(scores > 0)
    # Only the best few can be shown or named: those are ranked, the rest only counted.
    if len(relevant) > _RANKED:
        relevant = relevant[np.argpartition(-scores[relevant], _RANKED)[:_RANKED]]
    # Best first; equal scores in the order the items were written.
    ranked = relevant[np.lexsort((relevant, -scores[relevant]))]
    not_shown: list[str] = []
    more = 0
    for i in ranked.tolist():
        item = index.others[i]
        if not _alive(item, file_ids, source_ids):
            continue
        if item.tokens <= left:
            shown.append(item)
            left -= item.tokens
        elif len(not_shown) < MAX_NAMED:
            not_shown.append(item.title)
        else:
            more += 1
    beyond = int(np.count_nonzero(scores > 0)) - len(ranked)
    if beyond:  # the relevant items past the ranked ones, but those of deleted files
        alive = scores > 0
        alive[ranked] = False
        dead = _dead(index, file_ids, source_ids)
        if dead:
            alive[list(dead)] = False
        more += int(np.count_nonzero(alive))
    return Selection(shown, not_shown, more)


def _dead(index: ProjectIndex, file_ids: set[uuid.UUID], source_ids: set[uuid.UUID]) -> set[int]:
    """The items whose file or source was deleted."""
    gone = [items for f, items in index.by_file.items() if f not in file_ids]
    gone += [items for s, items in index.by_source.items() if s not in source_ids]
    return {i for items in gone for i in items}


def _alive(item: Candidate, file_ids: set[uuid.UUID], source_ids: set[uuid.UUID]) -> bool:
    """The item's file or source still exists (an item of a deleted one is left out)."""
    if item.file_id is not None and item.file_id not in file_ids:
        return False
    return item.source_id is None or item.source_id in source_ids


_COLUMNS = (
    KnowledgeItem.id,
    KnowledgeItem.kind,
    KnowledgeItem.title,
    KnowledgeItem.body,
    KnowledgeItem.file_id,
    KnowledgeItem.source_id,
    KnowledgeItem.table_name,
    KnowledgeItem.column_name,
    KnowledgeItem.tokens,
)


def _candidate(
    id: uuid.UUID,
    kind: str,
    title: str,
    body: str,
    file_id: uuid.UUID | None,
    source_id: uuid.UUID | None,
    table: str | None,
    column: str | None,
    tokens: int | None,
) -> Candidate:
    return Candidate(
        id,
        kind,
        title,
        body,
        file_id,
        source_id,
        table,
        column,
        tokens or estimate_tokens(title, body),
    )


# One per process: the cache is shared by every run of the replica.
selector = KnowledgeSelector()
