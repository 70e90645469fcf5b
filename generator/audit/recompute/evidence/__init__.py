"""The evidence weighed: attempts, resumes, provenance, comparability, devices and memory."""
