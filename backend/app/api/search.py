"""Search across the sessions a user can see (GET /search)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import CurrentUser, DbDep, PageDep
from app.errors import NotFound
from app.ownership import role_in
from app.search import service
from app.search.schemas import SearchPage

router = APIRouter(tags=["search"])


@router.get("/search", response_model=SearchPage)
async def search(
    db: DbDep,
    user: CurrentUser,
    page: PageDep,
    q: Annotated[str, Query(min_length=1, max_length=200, description="The words to find")],
    project_id: Annotated[uuid.UUID | None, Query(description="Only this project's")] = None,
) -> SearchPage:
    """Sessions' titles, questions, answers, steps' code and artifacts' names matching `q`
    in the projects you are a member of, best first; each snippet HTML-escaped with the
    hits in `<mark>`."""
    if project_id is not None and await role_in(db, user, project_id) is None:
        raise NotFound("No such project.", code="project_not_found")
    return await service.search(db, user.id, q, project_id, page.limit, page.offset)
