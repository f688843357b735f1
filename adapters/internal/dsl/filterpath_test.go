package dsl

import "testing"

func TestWithSearchFilterPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/ix/_search", "/ix/_search?filter_path=" + SearchFilterPath},
		{"/ix/_search?ignore_unavailable=true", "/ix/_search?ignore_unavailable=true&filter_path=" + SearchFilterPath},
		{"/_search", "/_search?filter_path=" + SearchFilterPath},
	} {
		if got := WithSearchFilterPath(tc.in); got != tc.want {
			t.Errorf("WithSearchFilterPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
