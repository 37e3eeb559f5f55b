//go:build !amd64 || purego

package search

import "testing"

func eachCPU(t *testing.T, f func(t *testing.T)) { f(t) }
