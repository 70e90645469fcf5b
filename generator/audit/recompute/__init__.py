"""Recomputation: pure functions from loaded tables to results and findings; they never read files."""
