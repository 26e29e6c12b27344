"""The small shared core every component builds on: errors, logging, config, version."""
