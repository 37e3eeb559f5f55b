package filestore

import (
	"testing"

	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/panto-dev/panto/pkg/store/storetest"
)

// TestConformance: the file store keeps the contract every store keeps.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return &Files{Env: catalog.Env{SessionDir: t.TempDir()}, CacheDir: t.TempDir(), Wait: DefaultWait}
	})
}
