package main

import (
	"fmt"

	"google.golang.org/protobuf/proto"
)

// codec passes CloudProvider messages through as the bytes they arrived as (*[]byte), so the
// front needs no generated code and forwards exactly what the caller sent; anything else
// (the health service's messages) is ordinary protobuf.
type codec struct{}

func (codec) Name() string { return "proto" }

func (codec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case *[]byte:
		return *m, nil
	case proto.Message:
		return proto.Marshal(m)
	}
	return nil, fmt.Errorf("codec: cannot marshal %T", v)
}

func (codec) Unmarshal(data []byte, v any) error {
	switch m := v.(type) {
	case *[]byte:
		*m = append((*m)[:0], data...)
		return nil
	case proto.Message:
		return proto.Unmarshal(data, m)
	}
	return fmt.Errorf("codec: cannot unmarshal into %T", v)
}
