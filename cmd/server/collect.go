package main

// This file gathers what every part of the server contributes — River
// workers, periodic jobs, ops, HTTP mounters, background loops — into the
// lists the server is built from. Each part adds its parameter and its line
// here; Wire supplies the parameters.

import (
	"github.com/riverqueue/river"

	"github.com/standmeet/standmeet/internal/adapters/eventsops"
	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/events"
)

func provideWorkers(prune *events.PruneWorker) (*river.Workers, error) {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, prune); err != nil {
		return nil, err
	}
	return workers, nil
}

func providePeriodicJobs(cfg config.Config) []*river.PeriodicJob {
	var jobs []*river.PeriodicJob
	jobs = append(jobs, events.PeriodicJobs(cfg.EventRetention)...)
	return jobs
}

// provideSubscriptions lists every subscriber of the bus.
func provideSubscriptions() []events.Subscription {
	return subscriptionsOf()
}

func provideOps(eventStore *events.Store) op.Set {
	var ops op.Set
	ops = append(ops, eventsops.Ops(eventStore)...)
	return ops
}

func provideMounters() []httpapi.Mounter {
	var ms []httpapi.Mounter
	return ms
}

func provideBackground(relay *events.Relay) []Background {
	var bs []Background
	bs = append(bs, relay)
	return bs
}

func provideMiddleware() []echoMiddleware {
	var ms []echoMiddleware
	return ms
}
