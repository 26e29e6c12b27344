package main

import (
	"testing"

	"github.com/awslabs/operatorpkg/controller"
)

func TestRetimedNeedsTheProvisionerAndQueues(t *testing.T) {
	if _, err := retimed([]controller.Controller{}, retimedDeps{}); err == nil {
		t.Fatal("an empty list must be refused")
	}
}
