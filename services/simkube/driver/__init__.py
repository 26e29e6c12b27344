"""sk-driver: replays a trace into a simulated cluster with faithful timing.

The pieces, in the order data flows through them: ``sources`` fetches a trace (file, URL,
bytes or a tracer's Export) and ``scanning`` reads it once to validate it and learn what it
needs; ``simulation`` creates the SimulationRoot (``roots``) and drives ``replaying``, which
waits on ``clock`` for each event's due time and hands its objects to ``applying`` after
``rewriting`` has made them fit the simulated cluster; ``podtimer`` gives controller-made pods
their recorded lifetimes (``lifecycles``) for KWOK to act on. ``service`` and ``main`` are the
gRPC and command-line front ends. Imports go one way: driver → trace, core.
"""
