"""The decision arranged for the page: the typed view, its rows, findings, finance and words."""
