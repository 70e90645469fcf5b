"""The audit side: load a campaign folder, validate it, recompute its results, gate the decision."""
