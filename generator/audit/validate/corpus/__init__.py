"""The corpus's rules: expected IDs, reference, fingerprints, splits and planned subgroups."""
