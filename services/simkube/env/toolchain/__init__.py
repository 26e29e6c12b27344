"""The upstream binaries: what is built (catalog), from which pinned Go modules (the folders
beside these modules, one wrapper module per group), into which cache, and how.

Nothing here starts a process; the rest of ``simkube.env`` asks this package for paths only.
"""
