package rankmath

import (
	"strings"
	"testing"
)

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"whitespace", " \t\n ", 0},
		{"one word", "hello", 1},
		{"sentence", "The quick brown fox jumps.", 6},
		{"eight-letter word", "abcdefgh", 1},
		{"nine-letter word", "retrieval", 2},
		{"long word", "internationalization", 3},
		{"digits", "2023", 1},
		{"punctuation each", "a,b;c!", 6},
		{"symbols", "x+y=z", 5},
		{"accented", "café crème", 2},
		{"combining mark stays in word", "cafe\u0301", 1},
		{"han one per char", "检索增强", 4},
		{"mixed scripts", "RCP是协议", 4},
		{"emoji is a symbol", "ok 👍", 2},
		{"hangul", "안녕", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(tt.in); got != tt.want {
				t.Fatalf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

// TestEstimateTokensAdditive checks whitespace-joined texts add up.
func TestEstimateTokensAdditive(t *testing.T) {
	parts := []string{"Retrieval-augmented generation", "检索", "k=10, candidateK=100."}
	sum := 0
	for _, p := range parts {
		sum += EstimateTokens(p)
	}
	if got := EstimateTokens(strings.Join(parts, " ")); got != sum {
		t.Fatalf("joined = %d, sum = %d", got, sum)
	}
}

func TestPackBudget(t *testing.T) {
	texts := []string{"one two three", "four five", "six seven eight nine", "ten"} // 3, 2, 4, 1
	tests := []struct {
		name    string
		texts   []string
		budget  int
		n, used int
	}{
		{"exact fit of two", texts, 5, 2, 5},
		{"stops at first misfit", texts, 8, 2, 5},
		{"all fit", texts, 10, 4, 10},
		{"first does not fit", texts, 2, 0, 0},
		{"zero budget", texts, 0, 0, 0},
		{"negative budget", texts, -1, 0, 0},
		{"empty texts cost nothing", []string{"", " ", "a"}, 0, 2, 0},
		{"no texts", nil, 10, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, used := PackBudget(tt.texts, tt.budget)
			if n != tt.n || used != tt.used {
				t.Fatalf("PackBudget = (%d, %d), want (%d, %d)", n, used, tt.n, tt.used)
			}
		})
	}
}
