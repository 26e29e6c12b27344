"""The simulated cluster itself: PKI, kubeconfigs, the components' command lines (etcd,
kube-apiserver, controller-manager, scheduler, KWOK and its stages), fake nodes, and starting
them in dependency order.

It knows the toolchain's binaries and the base helpers of ``simkube.env``; it knows nothing of
simkube's own services or of the autoscalers, which run on top of it.
"""
