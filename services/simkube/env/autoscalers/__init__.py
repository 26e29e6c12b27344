"""The autoscalers a local environment can run: Cluster Autoscaler (a binary the user brings)
and Karpenter's KWOK provider (built here), with their flags, catalogues and in-flight state.
"""
