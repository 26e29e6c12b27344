package main

// Service is the externalgrpc CloudProvider service (proto/clusterautoscaler/...).
const Service = "clusterautoscaler.cloudprovider.v1.externalgrpc.CloudProvider"

// rule says, for one method whose answer sk-cloudprov derives only from the request and its
// node-groups configuration (fixed for the life of its process), how a request becomes a
// cache key (false: this request is always forwarded) and which successful answers may be
// kept. Why each method qualifies is argued from sk-cloudprov's code in docs/cloudprov.md.
type rule struct {
	key  func(request []byte) (string, bool)
	keep func(answer []byte) bool
}

// rulesFor gives the cached methods their rules; every other method is forwarded on every
// call. keyLabels, when not nil, are the only node labels sk-cloudprov's NodeGroupForNode
// reads (besides providerID and name): a node is then keyed by those alone, so that a
// changed annotation or another label (the TTL controller rewrites every Node's
// node.alpha.kubernetes.io/ttl as the cluster grows) does not make a new key. Without them
// the whole node is the key.
func rulesFor(keyLabels []string) map[string]rule {
	return map[string]rule{
		// A node's group: kept only when it names one (an empty answer can change, see docs).
		"/" + Service + "/NodeGroupForNode": {
			key:  func(request []byte) (string, bool) { return nodeRequestKey(request, keyLabels) },
			keep: namesGroup,
		},
		// Per-group options: kept only when empty (the group has no overrides); overrides
		// are divided by the current run's speed, which changes between runs.
		"/" + Service + "/NodeGroupGetOptions": {key: rawKey, keep: isEmpty},
		// A group's template Node, encoded once when sk-cloudprov starts.
		"/" + Service + "/NodeGroupTemplateNodeInfo": {key: rawKey, keep: always},
		"/" + Service + "/GPULabel":                  {key: rawKey, keep: always},
		"/" + Service + "/GetAvailableGPUTypes":      {key: rawKey, keep: always},
	}
}

func always([]byte) bool { return true }

func isEmpty(answer []byte) bool { return len(answer) == 0 }

// rawKey keys a request by its bytes: right for messages without maps, which Go's protobuf
// encoder (CA's) writes the same way every time.
func rawKey(request []byte) (string, bool) { return string(request), true }
