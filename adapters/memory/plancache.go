package memory

import (
	"bytes"
	"runtime"
	"sync"
	"weak"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
	"github.com/rcp-sidecar/rcp-sidecar/filterlang"
)

// planned is the typed form of a plan this store produced, so Search need
// not parse the plan's JSON body back.
type planned struct {
	body   *planBody
	filter filterlang.Filter
	raw    []byte // the Body the plan was issued with
}

// planCache maps live plans to their typed form. Entries are keyed by a
// weak pointer and removed when the plan is garbage collected, so the cache
// holds nothing a caller dropped.
type planCache struct{ m sync.Map } // weak.Pointer[adapters.Plan] → *planned

func (c *planCache) put(p *adapters.Plan, pl *planned) {
	key := weak.Make(p)
	c.m.Store(key, pl)
	runtime.AddCleanup(p, func(k weak.Pointer[adapters.Plan]) { c.m.Delete(k) }, key)
}

// get returns the typed form of p when p is a plan this store issued and
// its Body is unchanged since.
func (c *planCache) get(p *adapters.Plan) (*planned, bool) {
	v, ok := c.m.Load(weak.Make(p))
	if !ok {
		return nil, false
	}
	pl := v.(*planned)
	return pl, bytes.Equal(pl.raw, p.Body)
}
