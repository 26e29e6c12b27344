package main

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
)

// watchUpstream empties the cache whenever the connection to sk-cloudprov is lost, so that no
// answer outlives the sk-cloudprov process that gave it: a restarted sk-cloudprov may have
// been given other node groups. Every wake-up that leaves or skips READY counts as a loss
// (a state read after a wake-up may already be past a short visit to READY); only a plain
// move into READY keeps the cache. Returns when ctx ends.
func watchUpstream(ctx context.Context, conn *grpc.ClientConn, cache *answerCache,
	m *metrics, log *slog.Logger) {
	state := conn.GetState()
	for conn.WaitForStateChange(ctx, state) {
		next := conn.GetState()
		if state == connectivity.Ready || next != connectivity.Ready {
			entries, _ := cache.stats()
			cache.clear()
			if state == connectivity.Ready {
				m.invalidations.Inc()
				log.Info("connection to sk-cloudprov lost; cache emptied",
					"state", next.String(), "entries", entries)
			}
		}
		state = next
	}
}
