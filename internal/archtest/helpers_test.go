package archtest

import (
	"os"
	"testing"
)

func writeFile(path, src string) error { return os.WriteFile(path, []byte(src), 0o644) }

func TestAllowed(t *testing.T) {
	tests := []struct {
		imp   string
		allow []string
		want  bool
	}{
		{"encoding/json", []string{"std"}, true},
		{module + "/rcp", []string{"std"}, false},
		{module + "/rcp", []string{"std", "rcp"}, true},
		{module + "/rcp/jsonrpc", []string{"rcp"}, false},
		{"github.com/elastic/go-elasticsearch/v8", []string{"std", "github.com/elastic/"}, true},
		{"github.com/spf13/cobra", []string{"std", "github.com/spf13/viper"}, false},
		{module + "/adapters/qdrant", []string{"adapters/*"}, true},
		{module + "/adapters", []string{"adapters/*"}, false},
		{module + "/adapters/resilient/standby", []string{"adapters/*"}, false},
		{module + "/adaptersx/y", []string{"adapters/*"}, false},
	}
	for _, tt := range tests {
		if got := allowed(tt.imp, tt.allow); got != tt.want {
			t.Errorf("allowed(%q, %v) = %v, want %v", tt.imp, tt.allow, got, tt.want)
		}
	}
	if ownedBy("adapters/memory", []string{"cmd/"}) || !ownedBy("cmd/rcp-sidecar", []string{"cmd/"}) {
		t.Error("ownedBy prefix semantics broken")
	}
}
