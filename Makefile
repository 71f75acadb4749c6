# Two commands do everything on a fresh machine:
#   make demo   the CPU two-loop run: outer LoRA-GRPO of the tiny agent, transfer eval, report (runs/demo/)
#   make test   notebooks clean + exported, lesson cells, pytest
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# The CPU wheel of torch; a bare `torch` requirement would pull a multi-GB CUDA build.
TORCH   ?= torch==2.13.0

.PHONY: install demo test student test-nbs test-py lint-nbs bench clean-venv help setup-system check-system slides docs

help:
	@echo "make demo          - set up .venv if needed, then run the two-loop experiment on CPU (runs/demo/report.md)"
	@echo "make test          - set up .venv if needed, then nbdev-clean/export checks, nbdev-test, pytest"
	@echo "make setup-system  - install the system packages the README needs (bubblewrap, for the sandbox)"
	@echo "make bench         - benchmark scripts (figures printed, nothing asserted)"
	@echo "make slides        - the course decks, offline reveal.js (npm ci in slides/ once): _slides/index.html"
	@echo "make docs          - the course site, every lesson executed on CPU with its outputs: _site/index.html"

# System packages (Debian/Ubuntu): bubblewrap isolates the agent's reward code. Uses sudo unless already root.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
setup-system:
	@command -v bwrap >/dev/null && echo "bubblewrap: already installed" || $(SUDO) apt-get install -y bubblewrap

# Said before the install starts (which takes minutes), so a newcomer reads it first; the run's preflight says it again.
check-system:
	@command -v bwrap >/dev/null || echo "NOTE: bubblewrap is not installed, so agent-written reward code would run in a WEAK sandbox. Install it: sudo apt-get install bubblewrap   (or: make setup-system)"

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[dev]" "$(TORCH)"
	touch $(STAMP)

install: $(STAMP)

demo: check-system $(STAMP)
	$(BIN)/agentforge demo

# The notebooks are the source: cleaning and exporting them must leave the tree unchanged.
lint-nbs: $(STAMP)
	$(BIN)/nbdev-clean
	git diff --exit-code -- nbs || (echo "nbdev-clean changed notebooks: run it and commit" && exit 1)
	$(BIN)/nbdev-export
	git diff --exit-code -- agentforge || (echo "nbdev-export changed agentforge/: export and commit" && exit 1)
	test -z "$$(git status --porcelain -- agentforge nbs)" || (git status --porcelain -- agentforge nbs; echo "untracked files under nbs/ or agentforge/" && exit 1)

# Build (or load) the tiny student once, before notebooks run in parallel, and print its dev band.
student: $(STAMP)
	$(BIN)/agentforge student

test-nbs: $(STAMP)
	$(BIN)/nbdev-test --n-workers 2 --timing

test-py: $(STAMP)
	$(BIN)/python -m pytest -q

test: lint-nbs student test-nbs test-py

bench: $(STAMP)
	$(BIN)/python bench/probe.py
	$(BIN)/python bench/sandbox.py
	$(BIN)/python bench/student.py
	$(BIN)/python bench/inner.py
	$(BIN)/python bench/pool.py
	$(BIN)/python bench/rollout.py

# The course layer. reveal.js comes from npm, pinned by slides/package-lock.json (installed once, offline after);
# pandoc comes from the pypandoc-binary wheel (the dev extra). Decks go to _slides/, the site to _site/.
NPM ?= npm
SLIDES_NPM := slides/node_modules/.package-lock.json
$(SLIDES_NPM): slides/package.json slides/package-lock.json
	cd slides && $(NPM) ci --no-audit --no-fund
	touch $@

slides: $(STAMP) $(SLIDES_NPM)
	$(BIN)/python slides/build.py

# Executes every lesson (cached by content under build/site/), so the first run takes as long as nbdev-test;
# DOCS_JOBS=2 runs two lessons at once. A lesson that fails to execute is shown as failed and fails the target.
docs: $(STAMP) student
	$(BIN)/python site/build.py

clean-venv:
	rm -rf $(VENV)
