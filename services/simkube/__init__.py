"""simkube: record a Kubernetes cluster, replay it on fake nodes, autoscale it, report it.

Layers import in one direction only: ``core`` knows nothing of the others, ``env`` builds on
``core``, the services build on both, and ``skctl`` sits on top.
"""
