"""The validate stage: the rules across a loaded campaign's fields, rows and files, run from one list."""
