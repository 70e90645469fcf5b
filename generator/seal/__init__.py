"""The seal of a campaign's registration: registration.json, its detached CMS signature and its RFC 3161 token."""
