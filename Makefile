# Fresh machine to running service: `make run`. Whole test suite: `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint install migrate clean bench model peers

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python 3.11 or newer is required"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	@# not --quiet: a first install takes a while and says what it is doing; pip prints nothing while it unpacks
	@# the ~120 packages it collected, so a line every 5 s says it is still at it
	$(PY) -m pip install -e '.[dev]' & pid=$$!; i=0; \
	  while kill -0 $$pid 2>/dev/null; do sleep 1; i=$$((i + 1)); \
	    if [ $$((i % 5)) -eq 0 ] && kill -0 $$pid 2>/dev/null; then echo "[install] pip is still installing ($$i s)"; fi; \
	  done; wait $$pid
	touch $(STAMP)

# the reply classifier's local model, built deterministically from data/replies/train (cached under var/), on every
# CPU and with a progress line every few seconds
model: $(STAMP)
	$(PY) -m replies.model

install: $(STAMP) model

migrate: $(STAMP)
	$(PY) manage.py migrate --noinput -v1

# the service starts at once; on a fresh clone the reply model builds beside it (replies.model_background: its progress lines
# interleave with the service's; replies that arrive meanwhile wait for it and are classified once it is there)
run: migrate
	$(PY) manage.py seed_demo
	$(PY) -m replies.model_background & $(PY) manage.py serve

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# Debian's chromium and dovecot-imapd for the browser and IMAP tests (installed when missing and run as root)
peers:
	@.ci/peers

test: lint model peers
	$(PY) -m pytest -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) var
