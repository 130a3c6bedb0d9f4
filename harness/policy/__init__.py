"""A sandbox's declared policy: what it allows (models.py), read from OpenShell's
policy file or a matrix's inline table (load.py)."""
