"""`python -m app`: start the workbench with the settings from the environment and `.env`."""

from __future__ import annotations

import logging
import sys

import uvicorn
from pydantic import ValidationError

from app.config import Settings
from app.main import create_app


def main() -> None:
    try:
        settings = Settings()
    except ValidationError as exc:
        print("Workbench cannot start: the configuration is not valid.", file=sys.stderr)
        for error in exc.errors():
            where = ".".join(str(p) for p in error["loc"]) or "settings"
            print(f"  {where}: {error['msg']}", file=sys.stderr)
        sys.exit(2)
    logging.basicConfig(
        level=settings.LOG_LEVEL.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    print(f"Workbench on http://{settings.HOST}:{settings.PORT}", flush=True)
    uvicorn.run(
        create_app(settings),
        host=settings.HOST,
        port=settings.PORT,
        log_level=settings.LOG_LEVEL.lower(),
        proxy_headers=True,
    )


if __name__ == "__main__":
    main()
