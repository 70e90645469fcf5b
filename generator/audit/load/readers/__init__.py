"""Readers: one per input kind, each turning a file into typed data plus findings."""
