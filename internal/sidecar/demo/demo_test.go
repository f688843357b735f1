package demo_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/internal/sidecar/demo"
)

type doc struct {
	ID        string   `json:"_id"`
	Title     string   `json:"title"`
	Text      string   `json:"text"`
	Topic     string   `json:"topic"`
	Year      *int     `json:"year"`
	Tags      []string `json:"tags"`
	Published *bool    `json:"published"`
}

func TestCorpusShape(t *testing.T) {
	sc := bufio.NewScanner(bytes.NewReader(demo.CorpusJSONL))
	ids, topics := map[string]bool{}, map[string]int{}
	for line := 1; sc.Scan(); line++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var d doc
		if err := dec.Decode(&d); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		if d.ID == "" || d.Title == "" || len(d.Text) < 40 || d.Topic == "" || d.Year == nil || len(d.Tags) == 0 || d.Published == nil {
			t.Errorf("line %d: incomplete document %+v", line, d)
		}
		if ids[d.ID] {
			t.Errorf("line %d: duplicate _id %q", line, d.ID)
		}
		ids[d.ID] = true
		topics[d.Topic]++
	}
	if len(ids) < 120 || len(topics) < 10 {
		t.Errorf("corpus has %d docs over %d topics, want >= 120 over >= 10", len(ids), len(topics))
	}
}
