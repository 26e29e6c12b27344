package main

// Reading the few protobuf messages the front must look into, with protowire alone: the
// node of a NodeGroupForNode request (to key it canonically) and the group of its answer
// (to keep only answers that name one). Anything unexpected makes a call uncached, never
// an error: the call is then forwarded as it came.

import (
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
)

// record is one field of a message as it was encoded: its number and its bytes value.
type record struct {
	number protowire.Number
	value  []byte
}

// splitBytesFields reads a message whose fields are all length-delimited (strings, bytes,
// messages, map entries); false if it holds anything else or is malformed.
func splitBytesFields(message []byte) ([]record, bool) {
	var records []record
	for len(message) > 0 {
		number, kind, n := protowire.ConsumeTag(message)
		if n < 0 || kind != protowire.BytesType {
			return nil, false
		}
		message = message[n:]
		value, m := protowire.ConsumeBytes(message)
		if m < 0 {
			return nil, false
		}
		message = message[m:]
		records = append(records, record{number: number, value: value})
	}
	return records, true
}

// singles reads a message of string/message fields that each appear at most once, all with
// numbers in allowed; false otherwise.
func singles(message []byte, allowed ...protowire.Number) (map[protowire.Number][]byte, bool) {
	records, ok := splitBytesFields(message)
	if !ok {
		return nil, false
	}
	fields := map[protowire.Number][]byte{}
	for _, r := range records {
		if _, seen := fields[r.number]; seen || !contains(allowed, r.number) {
			return nil, false
		}
		fields[r.number] = r.value
	}
	return fields, true
}

func contains(numbers []protowire.Number, number protowire.Number) bool {
	for _, n := range numbers {
		if n == number {
			return true
		}
	}
	return false
}

// ExternalGrpcNode's fields.
const (
	nodeProviderID  protowire.Number = 1
	nodeName        protowire.Number = 2
	nodeLabels      protowire.Number = 3
	nodeAnnotations protowire.Number = 4
)

// nodeRequestKey keys a NodeGroupForNodeRequest by its node in a canonical encoding: Go
// writes map entries in random order, so the same node's labels and annotations arrive in a
// different order on every call. Anything but the known fields, a repeated single field or
// a repeated map key (where order would decide the value) leaves the request uncached.
func nodeRequestKey(request []byte, keyLabels []string) (string, bool) {
	top, ok := singles(request, 1)
	if !ok {
		return "", false
	}
	records, ok := splitBytesFields(top[1])
	if !ok {
		return "", false
	}
	single := map[protowire.Number][]byte{}
	maps := map[protowire.Number]map[string]string{nodeLabels: {}, nodeAnnotations: {}}
	for _, r := range records {
		switch r.number {
		case nodeProviderID, nodeName:
			if _, dup := single[r.number]; dup {
				return "", false
			}
			single[r.number] = r.value
		case nodeLabels, nodeAnnotations:
			entry, ok := singles(r.value, 1, 2)
			if !ok {
				return "", false
			}
			if _, dup := maps[r.number][string(entry[1])]; dup {
				return "", false
			}
			maps[r.number][string(entry[1])] = string(entry[2])
		default:
			return "", false
		}
	}
	var canonical []byte
	for _, number := range []protowire.Number{nodeProviderID, nodeName} {
		if value, ok := single[number]; ok {
			canonical = protowire.AppendTag(canonical, number, protowire.BytesType)
			canonical = protowire.AppendBytes(canonical, value)
		}
	}
	if keyLabels != nil { // the answer reads only these labels, and no annotation
		kept := map[string]string{}
		for _, label := range keyLabels {
			if value, ok := maps[nodeLabels][label]; ok {
				kept[label] = value
			}
		}
		maps = map[protowire.Number]map[string]string{nodeLabels: kept}
	}
	for _, number := range []protowire.Number{nodeLabels, nodeAnnotations} {
		canonical = appendMap(canonical, number, maps[number])
	}
	return string(canonical), true
}

func appendMap(out []byte, number protowire.Number, entries map[string]string) []byte {
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var entry []byte
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendString(entry, k)
		entry = protowire.AppendTag(entry, 2, protowire.BytesType)
		entry = protowire.AppendString(entry, entries[k])
		out = protowire.AppendTag(out, number, protowire.BytesType)
		out = protowire.AppendBytes(out, entry)
	}
	return out
}

// namesGroup is true for a NodeGroupForNodeResponse whose group has a non-empty id.
func namesGroup(answer []byte) bool {
	top, ok := splitBytesFields(answer)
	if !ok || len(top) != 1 || top[0].number != 1 {
		return false
	}
	id, ok := groupID(top[0].value)
	return ok && id != ""
}

// groupID reads a NodeGroup's id (field 1, a string) past its other fields (minSize and
// maxSize are varints, debug a string); false if the message is malformed or any field
// appears twice.
func groupID(message []byte) (string, bool) {
	id := ""
	seen := map[protowire.Number]bool{}
	for len(message) > 0 {
		number, kind, n := protowire.ConsumeTag(message)
		if n < 0 || seen[number] {
			return "", false
		}
		seen[number] = true
		message = message[n:]
		if number == 1 {
			if kind != protowire.BytesType {
				return "", false
			}
			value, m := protowire.ConsumeBytes(message)
			if m < 0 {
				return "", false
			}
			id = string(value)
			message = message[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(number, kind, message)
		if m < 0 {
			return "", false
		}
		message = message[m:]
	}
	return id, true
}
