"""The local simulated cluster: upstream binaries built from source, run as loopback processes.

``skctl env`` drives this package. Import direction: ``paths`` and ``catalog`` know nothing of
the rest; ``building`` and ``cache`` build on them; ``certs``, ``ports``, ``processes`` and
``kubeconfig`` are leaf helpers; ``components`` assembles command lines; ``startup`` starts
them in order and waits for each; ``lifecycle`` is up and down; ``status`` reports health.
"""
