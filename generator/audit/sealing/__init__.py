"""The registration's seal as the audit meets it: what a registration seals, and the seal `check` reads."""
