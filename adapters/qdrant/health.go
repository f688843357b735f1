package qdrant

import (
	"context"
	"fmt"

	qdrantgo "github.com/qdrant/go-client/qdrant"

	"github.com/rcp-sidecar/rcp-sidecar/adapters"
)

// Health implements adapters.HealthChecker: the status of the served
// collection (the alias target once probed). Green is green; yellow
// (optimizing) and grey (optimizations pending, e.g. after a restart)
// are yellow: every point is searchable; red (an optimizer error) is
// red.
func (a *adapter) Health(ctx context.Context) (adapters.Health, error) {
	if err := a.live(); err != nil {
		return adapters.Health{}, err
	}
	name := a.snapshot().collection
	if name == "" {
		name = a.cfg.Collection
	}
	info, err := a.client.GetCollectionInfo(ctx, name)
	if err != nil {
		return adapters.Health{}, opErr("collection info", err)
	}
	return collectionHealth(info.GetStatus())
}

// collectionHealth maps a collection status onto the common scale.
func collectionHealth(s qdrantgo.CollectionStatus) (adapters.Health, error) {
	h := adapters.Health{Of: "collection"}
	switch s {
	case qdrantgo.CollectionStatus_Green:
		h.Status, h.State = adapters.HealthGreen, "green"
	case qdrantgo.CollectionStatus_Yellow:
		h.Status, h.State = adapters.HealthYellow, "yellow"
	case qdrantgo.CollectionStatus_Grey:
		h.Status, h.State = adapters.HealthYellow, "grey"
	case qdrantgo.CollectionStatus_Red:
		h.Status, h.State = adapters.HealthRed, "red"
	default:
		return adapters.Health{}, fmt.Errorf("qdrant: unknown collection status %v", s)
	}
	return h, nil
}

var _ adapters.HealthChecker = (*adapter)(nil)
