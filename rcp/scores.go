package rcp

import (
	"cmp"
	"encoding/json"
	"slices"
)

// Scores is Hit.scores: the score of each stage that ranked the hit (e.g.
// "sparse", "dense", "rrf", "mmr"), ordered by stage name with no stage
// twice. It encodes as a JSON object. A slice rather than a map, so that a
// page of hits shares one allocation.
type Scores []StageScore

// StageScore is one member of Hit.scores.
type StageScore struct {
	Stage string
	Score float64
}

// ScoresOf returns m as Scores (nil for an empty m).
func ScoresOf(m map[string]float64) Scores {
	if len(m) == 0 {
		return nil
	}
	s := make(Scores, 0, len(m))
	for k, v := range m {
		s = append(s, StageScore{k, v})
	}
	slices.SortFunc(s, func(a, b StageScore) int { return cmp.Compare(a.Stage, b.Stage) })
	return s
}

// Lookup returns the score of stage and whether it is present.
func (s Scores) Lookup(stage string) (float64, bool) {
	for _, x := range s {
		if x.Stage == stage {
			return x.Score, true
		}
	}
	return 0, false
}

// Get returns the score of stage, 0 when absent.
func (s Scores) Get(stage string) float64 {
	v, _ := s.Lookup(stage)
	return v
}

// Map returns s as a map.
func (s Scores) Map() map[string]float64 {
	m := make(map[string]float64, len(s))
	for _, x := range s {
		m[x.Stage] = x.Score
	}
	return m
}

// MarshalJSON encodes s as an object; a non-finite score is an error, as
// with encoding/json.
func (s Scores) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	e := jsonAppender{b: make([]byte, 0, 2+32*len(s))}
	e.scores(s)
	return e.b, e.err
}

// UnmarshalJSON decodes an object; a repeated member keeps its last value,
// as for a map.
func (s *Scores) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		*s = nil
		return nil
	}
	*s = ScoresOf(m)
	if *s == nil {
		*s = Scores{}
	}
	return nil
}
