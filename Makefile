# Every target sets itself up: a fresh clone needs only `make app` or `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install app test test-fast lint system-deps clean

$(STAMP): requirements.txt pyproject.toml Makefile
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (Python 3.11)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	# tensorflow-text (SentencePiece in exported subword translators) declares `tensorflow`, which
	# would pull a second TensorFlow beside tensorflow-cpu: installed without its dependencies
	$(PY) -m pip install -q --no-deps tensorflow-text==2.21.1
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# Java (coco-caption METEOR / PTB tokenizer), WordNet (METEOR fallback; train entail --word-relations), Chromium (browser test),
# a Devanagari font (transliteration heat maps).
system-deps:
	-@if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  need=""; command -v java >/dev/null || need="$$need default-jre-headless"; \
	  [ -d /usr/share/wordnet ] || need="$$need wordnet-base wordnet-sense-index"; \
	  command -v chromium >/dev/null || need="$$need chromium"; \
	  [ -d /usr/share/fonts/truetype/lohit-devanagari ] || need="$$need fonts-lohit-deva"; \
	  if [ -n "$$need" ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$need; fi; \
	fi

# loopback by default; `make app APP_ADDRESS=0.0.0.0` exposes the demo to the network on purpose
APP_ADDRESS ?= 127.0.0.1
app: $(STAMP)
	$(VENV)/bin/streamlit run apps/app.py --server.headless true --server.address $(APP_ADDRESS)

lint: $(STAMP)
	$(VENV)/bin/ruff check captioner apps scripts tests

test: $(STAMP) system-deps lint
	$(PY) -m pytest -n 2 -q --durations=40

test-fast: $(STAMP)
	$(PY) -m pytest -n 2 -q -m "not slow"

clean:
	rm -rf $(VENV) .pytest_cache
