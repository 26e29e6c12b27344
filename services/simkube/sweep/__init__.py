"""Sweeps: one trace replayed over a grid of settings, to find the trade-offs (issue #27).

A sweep file (``spec``) names a base run and axes (``axes``): Simulation timers, Cluster
Autoscaler flags, node-group fields, the autoscaler, trace what-ifs. ``sampling`` chooses
combinations, ``points`` builds and checks each one, ``estimate`` says how long they take,
``inputs`` writes a point's trace and node groups, ``manifest`` and ``running`` run the
points resumably with a runner passed in (skctl's drives real environments), and
``collect``, ``frontier``, ``plots`` and ``report`` turn the results into a table, Pareto
frontiers and a page. docs/sweeps.md.
"""
