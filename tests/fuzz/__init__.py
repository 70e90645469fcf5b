"""Fuzzing support for the hostile-input tests: the harness, the mutators and the corpus of cases that once failed.

`harness` runs the CLI in-process and checks the property (exit 0, 1 or 2 with a message, within a time bound,
no uncaught exception, inputs unchanged); `mutators` turns a copy of inputs/example (or of a bundle) into a
hostile one, driven by a `random.Random` so that hypothesis (CI) and `tests/fuzz_long.py` (the long run) share
them; `cases/` holds the inputs that once failed, replayed by tests/test_hostile_corpus.py.
"""
