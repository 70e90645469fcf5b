"""Quality recomputed: acceptance, subgroups, reproduction, corpora and seeds."""
