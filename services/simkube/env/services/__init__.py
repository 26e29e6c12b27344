"""simkube's own services in a local environment (sk-cloudprov, sk-driver, sk-ctrl): their
command lines, the default node groups, and starting them once the control plane serves.
"""
