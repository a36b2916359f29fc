# Two entry points: `make demo` and `make test`. Both set up .venv themselves.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test setup system-packages

demo: $(STAMP)
	$(PY) -m jaxlab.demo

test: $(STAMP)
	$(PY) -m pytest -n 2 tests

setup: $(STAMP)

# apt packages are installed only when we are root (CI, fresh containers);
# elsewhere they are assumed present or not needed.
system-packages:
	@if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
		[ -n "$(APT_PACKAGES)" ] && (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(APT_PACKAGES)) || true; \
	fi

APT_PACKAGES := chromium mesa-vulkan-drivers

$(STAMP): pyproject.toml
	$(MAKE) system-packages
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	# the JupyterLab renderer for jaxlab's reports (prebuilt in extension/: no node needed)
	$(PY) -m pip install -q ./extension
	# the JupyterLab extension's TypeScript toolchain, for its type-check test
	if command -v node >/dev/null; then cd extension && ../$(VENV)/bin/jlpm install >/dev/null; fi
	touch $(STAMP)
