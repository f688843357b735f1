package rankmath

import "unicode"

// wordRunesPerToken approximates how many letters a BPE vocabulary folds
// into one token for ordinary words.
const wordRunesPerToken = 8

// EstimateTokens estimates the BPE token count of s for tokenBudget packing
// (§7.7.2). The heuristic is deterministic and tokenizer-free:
//   - a run of letters, digits and combining marks counts ceil(runes/8)
//     tokens (common words are one token, long ones split);
//   - each Han, Hiragana, Katakana or Hangul character counts one token and
//     ends a run;
//   - each punctuation or symbol character counts one token;
//   - whitespace and control characters count nothing.
//
// It tracks cl100k-style counts for English prose within roughly ±25%, which
// is enough to cap context size; it is not a tokenizer.
func EstimateTokens(s string) int {
	tokens, run := 0, 0
	flush := func() {
		tokens += (run + wordRunesPerToken - 1) / wordRunesPerToken
		run = 0
	}
	for _, r := range s {
		switch {
		case isCJK(r):
			flush()
			tokens++
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			run++
		case unicode.IsPunct(r) || unicode.IsSymbol(r):
			flush()
			tokens++
		default:
			flush()
		}
	}
	flush()
	return tokens
}

// isCJK reports scripts whose characters tokenize roughly one per token.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// PackBudget reports how many leading texts fit in budget tokens and how
// many tokens they use (§7.7.2). Packing stops at the first text that does
// not fit, so ranking order is preserved: if the first text alone exceeds
// the budget, the result is (0, 0). A negative budget fits nothing; empty
// texts cost nothing.
func PackBudget(texts []string, budget int) (n, used int) {
	for _, t := range texts {
		c := EstimateTokens(t)
		if used+c > budget {
			break
		}
		used += c
		n++
	}
	return n, used
}
