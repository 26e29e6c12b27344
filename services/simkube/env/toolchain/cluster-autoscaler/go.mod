// Wrapper module for building Cluster Autoscaler 1.36.1 (tag cluster-autoscaler-1.36.1,
// commit 35e8a280425c) from the Go module proxy with tags externalgrpc,kwok.
// CA has no semver tags, so it is required by pseudo-version; its own replace directives
// are restated here because replaces of a dependency do not apply to its users.
// There is no go.sum: the proxy this project was developed against refuses the module, so
// 'skctl env build --autoscaler' resolves it at build time when a proxy serves it.
module simkube.local/toolchain/cluster-autoscaler

go 1.26.0

require (
	k8s.io/autoscaler/cluster-autoscaler v0.0.0-20260722070747-35e8a280425c
	k8s.io/autoscaler/cluster-autoscaler/apis v0.0.0-20260722070747-35e8a280425c
)

replace github.com/aws/aws-sdk-go/service/eks => github.com/aws/aws-sdk-go/service/eks v1.38.49
replace github.com/rancher/go-rancher => github.com/rancher/go-rancher v0.1.0
replace k8s.io/api => k8s.io/api v0.36.2
replace k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.36.2
replace k8s.io/apimachinery => k8s.io/apimachinery v0.36.2
replace k8s.io/apiserver => k8s.io/apiserver v0.36.2
replace k8s.io/cli-runtime => k8s.io/cli-runtime v0.36.2
replace k8s.io/client-go => k8s.io/client-go v0.36.2
replace k8s.io/cloud-provider => k8s.io/cloud-provider v0.36.2
replace k8s.io/cluster-bootstrap => k8s.io/cluster-bootstrap v0.36.2
replace k8s.io/code-generator => k8s.io/code-generator v0.36.2
replace k8s.io/component-base => k8s.io/component-base v0.36.2
replace k8s.io/component-helpers => k8s.io/component-helpers v0.36.2
replace k8s.io/controller-manager => k8s.io/controller-manager v0.36.2
replace k8s.io/cri-api => k8s.io/cri-api v0.36.2
replace k8s.io/csi-translation-lib => k8s.io/csi-translation-lib v0.36.2
replace k8s.io/kube-aggregator => k8s.io/kube-aggregator v0.36.2
replace k8s.io/kube-controller-manager => k8s.io/kube-controller-manager v0.36.2
replace k8s.io/kube-proxy => k8s.io/kube-proxy v0.36.2
replace k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.36.2
replace k8s.io/kubectl => k8s.io/kubectl v0.36.2
replace k8s.io/kubelet => k8s.io/kubelet v0.36.2
replace k8s.io/metrics => k8s.io/metrics v0.36.2
replace k8s.io/mount-utils => k8s.io/mount-utils v0.36.2
replace k8s.io/sample-apiserver => k8s.io/sample-apiserver v0.36.2
replace k8s.io/sample-cli-plugin => k8s.io/sample-cli-plugin v0.36.2
replace k8s.io/sample-controller => k8s.io/sample-controller v0.36.2
replace k8s.io/pod-security-admission => k8s.io/pod-security-admission v0.36.2
replace k8s.io/dynamic-resource-allocation => k8s.io/dynamic-resource-allocation v0.36.2
replace k8s.io/kms => k8s.io/kms v0.36.2
replace k8s.io/endpointslice => k8s.io/endpointslice v0.36.2
replace k8s.io/cri-client => k8s.io/cri-client v0.36.2
replace k8s.io/externaljwt => k8s.io/externaljwt v0.36.2
replace k8s.io/cri-streaming => k8s.io/cri-streaming v0.36.2
replace k8s.io/streaming => k8s.io/streaming v0.36.2
