# The two commands: `make demo` and `make test`. See README.md.
SHELL := /bin/bash
PY := .venv/bin/python
PIP := .venv/bin/pip
# Tests run on PostgreSQL and Redis on loopback.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/reverie_ops
TEST_REDIS_URL ?= redis://127.0.0.1:6379/1
# pytest-xdist workers for `make test`: whole modules per worker, the slow ones first
# (tests/conftest.py); most tests wait on I/O, so 4 pay on 2 cores. 0 runs serially.
TEST_WORKERS ?= 4
DEMO_ADDR ?= 127.0.0.1:8000
# One database per demo address: a second demo (another DEMO_ADDR) keeps the first's.
DEMO_DB := demo-$(lastword $(subst :, ,$(DEMO_ADDR))).sqlite3
DEMO_DATABASE_URL ?= sqlite:///$(CURDIR)/$(DEMO_DB)

.PHONY: demo test lint services venv bench clean

venv: .venv/.installed

.venv/.installed: requirements.txt requirements-dev.txt
	test -x $(PY) || python3 -m venv .venv
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

# Start PostgreSQL and Redis on loopback if they are stopped (Debian's commands).
services:
	@bash scripts/services.sh

# The demo runs with DEBUG on: a development secret, plain HTTP (production settings
# refuse to start without a real DJANGO_SECRET_KEY).
demo: venv
	@$(PY) -m core.addr $(DEMO_ADDR)
	rm -f $(DEMO_DB)
	DJANGO_DEBUG=true DATABASE_URL=$(DEMO_DATABASE_URL) $(PY) manage.py migrate --noinput -v 0
	DJANGO_DEBUG=true DATABASE_URL=$(DEMO_DATABASE_URL) $(PY) manage.py demo --addr $(DEMO_ADDR)

test: venv services
	@bash scripts/browser.sh
	@bash scripts/prometheus.sh
	@bash scripts/nginx.sh
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

lint: venv
	$(PY) -m ruff check .
	$(PY) -m mypy canary routing reverie_ops openrouter fake_openrouter core observability ignore_client
	.venv/bin/lint-imports

bench: venv services
	$(PY) bench/round.py
	$(PY) bench/judge_speed.py
	$(PY) bench/sse_parse.py
	$(PY) bench/verdicts.py
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) bench/round_scale.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/ignore_api.py
	DATABASE_URL=$(TEST_DATABASE_URL) $(PY) bench/dashboards.py
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) bench/gateway.py
	REDIS_URL=$(TEST_REDIS_URL) $(PY) bench/web_workers.py

clean:
	rm -rf .venv demo*.sqlite3 staticfiles
