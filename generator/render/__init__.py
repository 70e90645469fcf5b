"""Rendering the decision note: view model, Jinja2 HTML, matplotlib charts, WeasyPrint PDF/A-3a, in four languages."""
