"""sk-tracer: watch a live cluster into a durable, bounded on-disk store; export time windows.

Layers, imported in one direction only (each module imports only those to its right)::

    main ─▶ runtime ─▶ service ─▶ exporting ─▶ export_filters, usage
                   │           └▶ store ─▶ recovery ─▶ segment_reading ─▶ segments ─▶ trace
                   ├▶ watching ─▶ recorder ─▶ lifecycles, sanitising, store
                   │           └▶ owners ─▶ core's Kubernetes access layer (discovery)
                   ├▶ usage_sampling ─▶ usage, owners
                   └▶ metrics, status
    client (used by skctl and other services) ─▶ gen (the Tracer gRPC stubs)

``config``, ``kinds`` and ``units`` are leaves every layer may use; label selectors come
from ``simkube.trace`` (its model), shared with the trace tools. docs/tracer.md describes the
behaviour.
"""
