# The image of `skctl sweep run --on-cluster`'s pods (docs/sweeps.md): the services' image
# (deploy/Dockerfile) plus the upstream binaries one whole simulated environment runs as
# processes: etcd, kube-apiserver, controller manager, scheduler, KWOK, kubectl and Cluster
# Autoscaler. They are built from the pinned Go modules exactly as `skctl env build
# --autoscaler` builds them on a workstation (CGO off, so the slim base needs no compiler).
# No container engine and no root at run time: each pod starts its environment as the
# image's simkube user. Build from the repository root, after the services' image:
#   docker build -f deploy/Dockerfile -t simkube-py:0.1.0 .
#   docker build -f deploy/sweep.Dockerfile --build-arg BASE=simkube-py:0.1.0 \
#       -t simkube-py-sweep:0.1.0 .
ARG BASE=simkube-py:0.1.0

FROM golang:1.26-bookworm AS go

# --- toolchain: the base image's own skctl builds the binaries into /opt/simkube
FROM ${BASE} AS toolchain
USER root
COPY --from=go /usr/local/go /usr/local/go
RUN mkdir -p /opt/simkube && chown 10001:10001 /opt/simkube
USER 10001:10001
ENV PATH=/usr/local/go/bin:$PATH \
    SIMKUBE_CACHE_DIR=/opt/simkube
RUN skctl env build --autoscaler

# --- runtime: the base image and the built binaries, no Go
FROM ${BASE}
COPY --from=toolchain /opt/simkube/bin /opt/simkube/bin
# The binaries are read from here; each pod keeps its environment under $SIMKUBE_HOME, an
# emptyDir the Job mounts.
ENV SIMKUBE_CACHE_DIR=/opt/simkube
USER 10001:10001
CMD ["skctl", "sweep", "worker", "--help"]
