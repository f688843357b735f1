package adapters_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

type fakeConfig struct{ OK bool }

func (c *fakeConfig) Validate() error {
	if !c.OK {
		return errors.New("not ok")
	}
	return nil
}

func fakeFactory(name string) adapters.Factory {
	return adapters.Factory{
		Name:      name,
		NewConfig: func() adapters.Config { return &fakeConfig{} },
		Open: func(context.Context, adapters.Config, adapters.Deps) (adapters.Adapter, error) {
			return nil, errors.New("fake: no adapter")
		},
	}
}

func TestRegistryLookup(t *testing.T) {
	r := adapters.NewRegistry(fakeFactory("b"), fakeFactory("a"))
	tests := []struct {
		name string
		want bool
	}{
		{"a", true},
		{"b", true},
		{"c", false},
		{"", false},
	}
	for _, tt := range tests {
		f, ok := r.Lookup(tt.name)
		if ok != tt.want {
			t.Errorf("Lookup(%q) ok = %v, want %v", tt.name, ok, tt.want)
		}
		if ok && f.Name != tt.name {
			t.Errorf("Lookup(%q) returned factory %q", tt.name, f.Name)
		}
	}
	if got := r.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Names() = %v, want [a b]", got)
	}
}

func TestRegistryNewConfigIsFresh(t *testing.T) {
	r := adapters.NewRegistry(fakeFactory("x"))
	f, _ := r.Lookup("x")
	c1, c2 := f.NewConfig(), f.NewConfig()
	c1.(*fakeConfig).OK = true
	if c2.Validate() == nil {
		t.Fatal("NewConfig returned a shared value")
	}
}

func TestRegistryPanics(t *testing.T) {
	incomplete := fakeFactory("y")
	incomplete.Open = nil
	tests := []struct {
		name string
		fs   []adapters.Factory
	}{
		{"duplicate", []adapters.Factory{fakeFactory("x"), fakeFactory("x")}},
		{"empty name", []adapters.Factory{fakeFactory("")}},
		{"nil open", []adapters.Factory{incomplete}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("NewRegistry did not panic")
				}
			}()
			adapters.NewRegistry(tt.fs...)
		})
	}
}

func TestSecretElided(t *testing.T) {
	s := adapters.Secret("hunter2")
	outs := map[string]string{
		"%v":  fmt.Sprintf("%v", s),
		"%s":  fmt.Sprintf("%s", s),
		"%#v": fmt.Sprintf("%#v", s),
		"%+v": fmt.Sprintf("%+v", struct{ P adapters.Secret }{s}),
	}
	j, err := json.Marshal(map[string]adapters.Secret{"p": s})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	outs["json"] = back["p"]
	for how, out := range outs {
		if strings.Contains(out, "hunter2") || !strings.Contains(out, "<secret>") {
			t.Errorf("%s: %q leaks or lacks the placeholder", how, out)
		}
	}
	if s.Reveal() != "hunter2" {
		t.Errorf("Reveal() = %q", s.Reveal())
	}
	if adapters.Secret("").String() != "" {
		t.Error("empty secret should print empty")
	}
}
