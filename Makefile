# The two commands of the README:
#   make course   the main job: build and validate the release, grade the sample class, print the grades
#   make test     every test (CI runs exactly this)
#   make check    the inner loop: the linter (ruff), course helpers and the grader's rule tests, no notebook run (~1 min)
# Both create .venv from requirements.lock first when it is missing or out of date.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: course test check lint lab release bundle bench scale mutants clean help

help:
	@echo "make course   build + validate release/, grade the sample class, print the grades"
	@echo "make test     run every test (what CI runs)"
	@echo "make check    the linter (ruff) and the quick tests: course helpers and the grader's rules (about 1 min)"
	@echo "make lint     the linter alone: ruff check, as configured in pyproject.toml"
	@echo "make lab      open JupyterLab on release/ (the student's view)"
	@echo "make release  rebuild release/ from source/ and validate it"
	@echo "make bundle   build the student bundle (build/student_bundle.zip)"
	@echo "make bench    run the benchmarks (benchmarks/results/)"
	@echo "make scale    grading throughput: nbgrader vs trusted (jobs 1/2, warm/cold, Dask), class cost"
	@echo "make mutants  mutants of the reference solutions graded by the hidden tests: caught / missed per lesson"

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version.split()[0] + " (set PYTHON=/path/to/python3.11)"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

course: $(STAMP)
	$(PY) -m autograder course

release: $(STAMP)
	$(PY) -m autograder release

# Two workers (pytest-xdist): each test file whole on one, the longest first (tests/conftest.py).
TEST_JOBS ?= 2
test: $(STAMP) lint
	$(PY) -m pytest -n $(TEST_JOBS) --dist loadscope --no-loadscope-reorder

# The linter ([tool.ruff] in pyproject.toml): lint only, nothing is reformatted.
lint: $(STAMP)
	$(PY) -m ruff check .

# The inner loop: tests that execute no notebook and grade no class.
CHECK_TESTS := $(addprefix tests/test_,course_helpers.py timing.py network.py shapes_data.py torch_checks.py \
               gradcheck.py pins.py solutions.py stubs.py knowledge_check.py no_answers_in_course.py given_cells.py \
               validated_release.py resolver.py layout.py)
check: $(STAMP) lint
	$(PY) -m pytest -q $(CHECK_TESTS)

bundle: $(STAMP)
	$(PY) -m autograder bundle --zip

bench: $(STAMP)
	$(PY) -m benchmarks.run

# SCALE_ARGS: e.g. --students 40 for a generated class of 200 submissions on top of the honest corpus
scale: $(STAMP)
	$(PY) -m benchmarks.scale $(SCALE_ARGS)

# MUTANTS_ARGS: e.g. --lesson lesson2_loops --limit 20 --jobs 2 --seed 7 (benchmarks/results/mutants.json)
mutants: $(STAMP)
	$(PY) -m benchmarks.mutants $(MUTANTS_ARGS)

# LAB_ARGS: more options for JupyterLab (e.g. --no-browser). As root (in many containers) it needs --allow-root.
lab: $(STAMP)
	cd release && ../$(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

clean:
	rm -rf submitted autograded feedback gradebook.db build sample_class reports records grades.csv
