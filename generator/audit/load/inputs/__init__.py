"""The campaign's inputs as frozen dataclasses, built once by `load` from schema-valid data."""
