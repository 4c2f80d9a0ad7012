# Workbench: `make run` starts it on embedded defaults, `make test` runs every test.
SHELL := /bin/bash
BACKEND := backend
FRONTEND := frontend
UV := $(shell command -v uv 2>/dev/null || echo python3 -m uv)
COMPOSE := docker compose

.PHONY: help run test test-setup test-backend test-frontend lint format migrate up down start stop deps \
	frontend-deps spa sandbox-runtime client bench-upload bench-agent bench-sandbox bench-load bench-snapshot bench-branch \
	bench-local-model bench-preview bench-sources bench-big-upload bench-knowledge bench-jobs-schedule bench-jobs test-deploy settings-docs

help:
	@echo "make run      start the workbench on embedded defaults (http://127.0.0.1:8000)"
	@echo "make test     run every test; as root it first installs the Debian packages and starts the services the tests need (make test-setup; see docs/development.md)"
	@echo "make client   regenerate the browser app's API client from the OpenAPI document"
	@echo "make settings-docs  write docs/configuration.md and .env.example from backend/app/config/"
	@echo "make lint     ruff and mypy (backend), tsc (browser app types)"
	@echo "make bench-preview  decide the column kinds of a ~1 GB CSV over the whole file, then page, sort and filter its preview (DuckDB), from its text and from its typed copy, and print the times"
	@echo "make bench-sources  sql() against psql on 10M PostgreSQL rows (DB_ARGS=\"--rows 2000000\" for less); a group-by over a 5 GB CSV and its Parquet in a 2 GB sandbox, pandas there, previews (ARGS=\"--size-gb 1\" for a quick run)"
	@echo "make bench-knowledge  choose a question's knowledge items among 10,000 (p50/p95, target p95 <= 10 ms) and in a project with none (ARGS=\"--postgres\" on PostgreSQL too)"
	@echo "make bench-jobs  a two-question analysis asked with the scripted model (1.5 s a call) made into a job, then its runs timed against the questions (median, target <= 0.3x); then bench-jobs-schedule (ARGS: bench-jobs' own, e.g. \"--repeat 5 --latency 1.5\")"
	@echo "make bench-attempts  a question asked with 3 attempts against 1 on a 200 MB state, with the scripted model answering at once and at 1.5 s a call (target <= 1.3x); the fork of the state into three workers (target <= 1 s) (ARGS=\"--state-mb 200 --repeat 3 --latency 1.5\")"
	@echo "make bench-jobs-schedule  1,000 job schedules fired by two tickers on one database, spread over 30 s and all due at once: each tick once, lateness p50/p95/p99/max (target max <= 5 s) (ARGS=\"--postgres\" on PostgreSQL too)"
	@echo "make bench-big-upload  a 5 GB CSV through the product on its defaults: upload, preview, a question answered with DuckDB in a 2 GB sandbox, pandas refused (ARGS=\"--size-gb 1\" for a quick run)"
	@echo "make bench-branch  per-run snapshot states as chunks: storage for ten runs leaving a 500 MB DataFrame untouched (target <= 1.1x one), a run's end with nothing changed, a 200 MB state restored into a new session's worker (target <= 2 s) (ARGS=\"--size-mb 50\" for a quick run)"
	@echo "make migrate  apply database migrations to DATABASE_URL"
	@echo "make up/down  start/stop Postgres, Redis and MinIO with docker compose"
	@echo "make start/stop  the whole team setup with docker compose"
	@echo "make test-deploy  deploy the team setup with docker compose and check it (part of make test)"

# `make run` numbers the steps its prerequisites take ($(call step,N,what) in a recipe's shell
# line); run on their own, or for other targets, they print no step.
run: STEPS := 5
step = $(if $(STEPS),echo "[$(1)/$(STEPS)] $(2)",true)

# uv itself, then the locked Python dependencies (quiet: uv still prints its errors).
deps:
	@$(call step,1,Python packages (uv sync; the first time it downloads them unless uv's cache has them))
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 || \
		python3 -m pip install --quiet uv
	@cd $(BACKEND) && $(UV) sync --frozen -q

# The sandbox's runtime cache (bytecode of the analysis libraries, matplotlib's fonts), built
# in the background while the browser app installs and builds; the server waits for it if it
# is not done (app/sandbox/runtime_cache.py), and it is reused on later starts.
sandbox-runtime: deps
	@$(call step,2,Sandbox runtime: checked in the background (built on the first start only; about a minute))
	@cd $(BACKEND) && ( $(UV) run --frozen python -c \
		"import sys; from app.sandbox.runtime_cache import main; sys.exit(main())" & )

# The browser app's packages, reinstalled only when package-lock.json changed (npm's errors
# are printed; its warnings and progress are not).
frontend-deps:
	@command -v npm >/dev/null 2>&1 || { echo "Node.js (npm) is needed for the browser app: apt-get install nodejs npm"; exit 1; }
	@cd $(FRONTEND) && if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
		$(call step,3,Browser app packages (npm ci; first start only)); \
		npm ci --loglevel=error --no-audit --no-fund; \
	else $(call step,3,Browser app packages: up to date); fi

# The browser app, rebuilt only when its sources are newer than the last build: Vite alone,
# its output printed only when it fails. (`npm run build` also type-checks with tsc first,
# which doubles the time and is a developer's check, not needed to start the workbench.)
spa: frontend-deps
	@cd $(FRONTEND) && if [ ! -f dist/index.html ] || [ -n "$$(find src public index.html package-lock.json vite.config.ts tsconfig.json -newer dist/index.html -print -quit)" ]; then \
		$(call step,4,Building the browser app); \
		log=$$(mktemp) && if npx vite build >"$$log" 2>&1; then rm -f "$$log"; \
		else cat "$$log"; rm -f "$$log"; exit 1; fi; \
	else $(call step,4,Browser app: up to date); fi

# Says where it is once it answers there (backend/app/__main__.py).
run: deps sandbox-runtime spa
	@$(call step,5,Starting the workbench)
	@cd $(BACKEND) && $(UV) run --frozen python -m app

# The deployed test's preparation (a Docker engine, its images, the backend's image: mostly
# downloads and disk, at nice 10) runs in the background beside the backend's and the
# browser's tests, its output in DEPLOY_PREPARE_LOG (printed when it fails, which fails
# `make test`); test-deploy then finds it all made. Without the overlap the parts follow
# each other as before: make test-setup test-backend test-frontend test-deploy.
DEPLOY_PREPARE_LOG ?= $(or $(TMPDIR),/tmp)/workbench-test-deploy-prepare.log
test: test-setup
	@echo "test-deploy's preparation runs in the background (deploy/test/run.sh --prepare), its log in $(DEPLOY_PREPARE_LOG)"
	@UV="$(UV)" bash deploy/test/run.sh --prepare >"$(DEPLOY_PREPARE_LOG)" 2>&1 & prepare=$$!; \
	status=0; $(MAKE) -f $(firstword $(MAKEFILE_LIST)) --no-print-directory test-backend test-frontend || status=$$?; \
	if ! wait $$prepare; then \
		cat "$(DEPLOY_PREPARE_LOG)"; echo "test-deploy's preparation FAILED (its log above, also in $(DEPLOY_PREPARE_LOG))"; \
		exit 1; \
	fi; \
	echo "test-deploy's preparation: $$(tail -1 "$(DEPLOY_PREPARE_LOG)")"; \
	[ $$status = 0 ] || exit $$status; \
	$(MAKE) -f $(firstword $(MAKEFILE_LIST)) --no-print-directory test-deploy

# What the tests need on this machine, the first part of `make test` (and of CI): the Debian
# packages they use, and PostgreSQL, Redis and MariaDB on 127.0.0.1 as they log in to them.
# As root, what is missing is installed and started (it only looks when nothing is); as
# another user, it says what is missing and stops. The list is in the script.
test-setup:
	@bash scripts/test-setup.sh

# Two pytest workers (pytest-xdist), a test file each at a time: most of a test waits on a
# server, a sandbox or a subprocess, so two share this 2-core machine well (31 min alone,
# about 20 min as two). The frontend's packages first: the single sign-on tests run the
# OpenID provider of its devDependencies (npm oidc-provider) with node.
test-backend: deps frontend-deps
	cd $(BACKEND) && $(UV) run --frozen pytest -n 2 --dist loadfile --durations=40

# The team setup deployed for real (docker compose: one backend, then three behind the proxy)
# and checked from outside, the red team (backend/tests/redteam) run through it, then every
# Kubernetes overlay rendered and validated; brings up a Docker engine where none runs (as
# root on Debian). The last part of `make test`; see deploy/test/README.md.
test-deploy: deps
	UV="$(UV)" bash deploy/test/run.sh

# Unit tests, then the browser tests (Debian's chromium against the real backend).
test-frontend: deps frontend-deps
	cd $(FRONTEND) && npm test && npm run e2e

# docs/configuration.md and .env.example, written from the descriptions on Settings.
settings-docs: deps
	cd $(BACKEND) && $(UV) run --frozen python -m scripts.settings_docs

# The SPA's API client, generated from the backend's OpenAPI document.
client: deps frontend-deps
	cd $(BACKEND) && $(UV) run --frozen python -c "import json; from app.main import create_app; print(json.dumps(create_app().openapi(), indent=2))" > ../$(FRONTEND)/openapi.json
	cd $(FRONTEND) && npm run client

lint: deps frontend-deps
	cd $(BACKEND) && $(UV) run --frozen ruff check . && $(UV) run --frozen ruff format --check . && $(UV) run --frozen mypy app
	cd $(FRONTEND) && npx tsc -p tsconfig.json --noEmit

format: deps
	cd $(BACKEND) && $(UV) run --frozen ruff check --fix . && $(UV) run --frozen ruff format .

migrate: deps
	cd $(BACKEND) && $(UV) run --frozen alembic upgrade head

bench-upload: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.upload

# ARGS="--observability": the backend's CPU per run with metrics and traces on against off,
# backends side by side, then its instructions per run under callgrind where valgrind is
# installed (also for bench-load; docs/observability.md).
bench-agent: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.agent $(ARGS)

bench-sandbox: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.sandbox $(ARGS)

# N = 1, 50, 200 sessions at once on Postgres, Redis and S3 (needs the first two running).
bench-load: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.load $(ARGS)

up:
	$(COMPOSE) -f docker-compose.infra.yml up -d --wait

down:
	$(COMPOSE) -f docker-compose.infra.yml down

start:
	$(COMPOSE) up -d --build

stop:
	$(COMPOSE) down

# A session holding a 1 GB DataFrame: snapshot, store in S3, fetch elsewhere, restore.
bench-snapshot: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.snapshot

# Per-run states as chunks: storage for ten unchanged runs, a run's end, a branch's restore.
bench-branch: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.branch $(ARGS)

# Pages, sorts and filters over the whole of a ~1 GB CSV in the preview process; ARGS="--size-mb 256".
bench-preview: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.preview $(ARGS)

# Data where it lives (issue 25): files bigger than the sandbox's memory, beside DuckDB's own
# times (writes about 6 GB under /tmp, deleted after); ARGS="--size-gb 1" for a quick run.
bench-sources: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.sources_db $(DB_ARGS)
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.sources_files $(ARGS)

# The same 5 GB CSV through the product, an embedded workbench on its default settings:
# uploaded over HTTP, its preview paged and sorted, asked about with the scripted model (about
# 15 GB under /tmp at the peak: the file, its stored copy, the session's; deleted after);
# ARGS="--size-gb 1" for a quick run.
bench-big-upload: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.big_upload $(ARGS)

# Attempts (issue 44): 3 attempts against 1 with the scripted model answering at once and at
# 1.5 s a call, a 200 MB state forked into three workers (snapshot restore), attempts:1
# against today's path; ARGS="--state-mb 50 --latency 1.5".
bench-attempts: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.attempts $(ARGS)

# Choosing a question's knowledge items in a project with 10,000 of them (p50/p95, target
# p95 <= 10 ms) and in one with none (one cheap query), on SQLite; ARGS="--postgres" also
# on PostgreSQL (127.0.0.1:5432).
bench-knowledge: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.knowledge $(ARGS)

bench-jobs-schedule: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.jobs_schedule $(ARGS)

# A job run against the questions it was made from, then the schedule benchmark above.
bench-jobs: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.jobs $(ARGS)
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.jobs_schedule


# The project's own task set (backend/evals) against a running workbench, with the token of
# `workbench login` (or WORKBENCH_URL/WORKBENCH_TOKEN); e.g. ARGS="--model openai/gpt-4o --concurrency 4".
.PHONY: eval
eval: deps
	cd $(BACKEND) && $(UV) run --frozen workbench eval evals/tasks.jsonl --tables evals/tables $(ARGS)

# The shop task set (backend/evals/shop) against a database loaded from evals/shop/shop.sql,
# e.g. SHOP_URL=mysql://reader@127.0.0.1:3306/shop with WORKBENCH_SOURCE_PASSWORD_SHOP set.
.PHONY: eval-shop
eval-shop: deps
	@test -n "$(SHOP_URL)" || { echo "Set SHOP_URL, e.g. SHOP_URL=mysql://reader@127.0.0.1:3306/shop"; exit 2; }
	cd $(BACKEND) && $(UV) run --frozen workbench eval evals/shop/tasks.jsonl --source shop=$(SHOP_URL) $(ARGS)

# Gemma 3 270M on llama.cpp's OpenAI-compatible server, through `workbench eval`. It builds
# llama-cpp-python once into backend/.bench-llama (about ten minutes), never into the
# product's environment. ARGS="--limit 5 --max-steps 4" for a quick try.
bench-local-model: deps
	cd $(BACKEND) && $(UV) run --frozen python -m benchmarks.local_model $(ARGS)
