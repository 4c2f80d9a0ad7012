# Workbench: `make run` starts it on embedded defaults, `make test` runs every test.
SHELL := /bin/bash
BACKEND := backend
UV := $(shell command -v uv 2>/dev/null || echo python3 -m uv)
COMPOSE := docker compose

.PHONY: help run test lint format migrate up down start stop deps bench-upload bench-agent bench-sandbox

help:
	@echo "make run      start the workbench on embedded defaults (http://127.0.0.1:8000)"
	@echo "make test     run every test (needs PostgreSQL and Redis on 127.0.0.1; see README)"
	@echo "make lint     ruff and mypy"
	@echo "make migrate  apply database migrations to DATABASE_URL"
	@echo "make up/down  start/stop Postgres, Redis and MinIO with docker compose"
	@echo "make start/stop  the whole team setup with docker compose"

# uv itself, then the locked Python dependencies.
deps:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || \
		python3 -m pip install --quiet uv
	cd $(BACKEND) && $(UV) sync --frozen

run: deps
	cd $(BACKEND) && $(UV) run --frozen python -m app

test: deps
	cd $(BACKEND) && $(UV) run --frozen pytest

lint: deps
	cd $(BACKEND) && $(UV) run --frozen ruff check . && $(UV) run --frozen ruff format --check . && $(UV) run --frozen mypy app

format: deps
	cd $(BACKEND) && $(UV) run --frozen ruff check --fix . && $(UV) run --frozen ruff format .

migrate: deps
	cd $(BACKEND) && $(UV) run --frozen alembic upgrade head

bench-upload: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.upload

bench-agent: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.agent

bench-sandbox: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.sandbox

up:
	$(COMPOSE) -f docker-compose.infra.yml up -d --wait

down:
	$(COMPOSE) -f docker-compose.infra.yml down

start:
	$(COMPOSE) up -d --build

stop:
	$(COMPOSE) down
