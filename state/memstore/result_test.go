package memstore_test

import (
	"testing"

	"github.com/llmguard/llmguard/state"
	"github.com/llmguard/llmguard/state/memstore"
	"github.com/llmguard/llmguard/state/storetest"
)

func TestResultsConformance(t *testing.T) {
	storetest.RunResults(t, func(t *testing.T) state.ResultStore { return memstore.NewResults() })
}

func TestLeasesConformance(t *testing.T) {
	storetest.RunLeases(t, func(t *testing.T) state.LeaseStore { return memstore.NewLeases() })
}
