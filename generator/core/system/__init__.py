"""The machine around the audit: files written safely, keys, strict JSON, resources, fonts and workers."""
