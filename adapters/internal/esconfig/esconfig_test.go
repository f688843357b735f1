package esconfig

import (
	"strings"
	"testing"
)

// TestValidate: the shared checks name the engine and the setting.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Common
		want string // "" for valid
	}{
		{"defaults", Defaults(), ""},
		{"refresh true", Common{Refresh: "true"}, ""},
		{"bad refresh", Common{Refresh: "later"}, `opensearch: refresh "later" is not wait_for, true or false`},
		{"blank meta field", Common{MetaFields: []string{"a", " "}}, "opensearch: meta_fields: empty field name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate("opensearch")
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}
