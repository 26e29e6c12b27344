"""sk-cloudprov: Cluster Autoscaler's externalgrpc cloud provider over KWOK node groups.

A node group is a Deployment of placeholder pods; every placeholder pod has exactly one KWOK
Node. Cluster Autoscaler scales the Deployment through the gRPC API, a reconciler keeps the
Nodes in step with the pods, and every answer comes from an in-memory index fed by watches.
All state lives in the cluster, so the process can restart at any time.
"""
