"""``skctl check``: a CI gate comparing a run's figures with a baseline's (docs/ci.md).

``figures`` reads the watched figures from runs and summarises repetitions as spreads;
``baseline`` keeps them in a committed file; ``thresholds`` says how far each may move;
``judging`` applies the spread rule; ``rendering`` and ``junit`` show the outcome. It reads
results only through ``simkube.results``; finding runs by name is skctl's business.
"""
