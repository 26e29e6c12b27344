"""sk-tracer: watch a live cluster into a durable, bounded on-disk store; export time windows.

Layers, imported in one direction only::

    main ─▶ runtime ─▶ service ─▶ exporting ─▶ store ─▶ segments ─▶ simkube.trace
                    └▶ watching ─▶ kubeapi, discovery, owners
                    └▶ recorder ─▶ store, lifecycles, sanitising

``config``, ``kinds`` and ``units`` are leaves every layer may use; label selectors come
from ``simkube.trace.selectors``, shared with the trace tools.
"""
