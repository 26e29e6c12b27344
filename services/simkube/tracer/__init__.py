"""sk-tracer: watch a live cluster into a durable, bounded on-disk store; export time windows.

Layers, imported in one direction only::

    main ─▶ runtime ─▶ service ─▶ exporting ─▶ store ─▶ segments ─▶ simkube.trace
                    └▶ watching ─▶ kubeapi, discovery, owners
                    └▶ recorder ─▶ store, lifecycles, sanitising

``config``, ``kinds``, ``selectors`` and ``units`` are leaves every layer may use.
"""
