package rcptest

import (
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/rcp"
)

// WantError fails t unless err has the given code and data.field /
// data.option.
func WantError(t testing.TB, err *rcp.Error, code rcp.Code, field, option string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %d field=%q option=%q", code, field, option)
	}
	if err.Code != code {
		t.Fatalf("code = %d, want %d (%v)", err.Code, code, err)
	}
	if err.Data == nil {
		t.Fatalf("error has no data: %v", err)
	}
	if err.Data.Field != field || err.Data.Option != option {
		t.Fatalf("data = {field:%q option:%q}, want {field:%q option:%q}",
			err.Data.Field, err.Data.Option, field, option)
	}
}
