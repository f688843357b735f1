// Package demo bundles a small original corpus for `rcp-sidecar serve
// --demo`: 141 short passages in BEIR shape (_id, title, text) with typed
// metadata — topic (keyword), year (int), tags (keyword array) and
// published (bool) — across databases, search, astronomy, cooking, history,
// biology, programming, geology, music, climate, sports, linguistics,
// architecture and economics.
package demo

import _ "embed"

// CorpusJSONL is the corpus, one JSON object per line.
//
//go:embed corpus.jsonl
var CorpusJSONL []byte
