"""The local simulated cluster: upstream binaries built from source, run as loopback processes.

``skctl env`` drives this package. It is four rooms over a small base:

- base (this folder): ``paths``, ``ports``, ``processes``, ``state``, ``health``, ``grpcprobe``
  — where things live, loopback ports, detached processes, state.json, health probes;
- ``toolchain/``: what is built from which Go modules, and the binary cache;
- ``controlplane/``: PKI, kubeconfigs, component command lines, KWOK stages, fake nodes,
  ordered start-up;
- ``services/``: simkube's own services; ``autoscalers/``: Cluster Autoscaler and Karpenter;
- on top (this folder): ``lifecycle`` (up/down), ``status``, ``restarting`` and ``retiming``,
  which act on a whole environment and so may use every room.

Rooms import the base and the rooms listed before them, never the other way;
tests/unit/test_imports.py holds the order.
"""
