"""The codes of findings and problems: their type, their lists, and the registry that holds them."""
