"""Unit tests of simkube.trace: formats, readers, tools and skctl trace."""
