"""The page drawn: the note's HTML and PDF, its charts, and their worker processes."""
