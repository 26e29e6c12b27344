"""The Simulation: the product's central object, as values every program shares.

A Simulation is created by skctl (or kubectl), run by sk-ctrl, and followed by sk-cloudprov
(its run's speed and seed) and the results recorder. Each of them used to read the resource
as dicts and check its speed by its own rule; this package is the one reading. It holds
the resource's names (``names``), its states and condition types (``states``), its spec
parsed once into frozen values under every rule (``spec``, with the timers and seed in
``timers``), the ConfigMap through which sk-ctrl tells sk-cloudprov about the run in progress
(``run_configmap``), and the trace time of a run between the driver's reports
(``trace_clock``).

It imports only ``core`` (the speed rule and its conversion, ``core.simtime.TimeScale``, stay
in core because sk-driver uses them too and must not depend on the Simulation resource).
"""
