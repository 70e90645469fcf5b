"""Money recomputed: a package's cost, its packages and the spend as decision.json records it."""
