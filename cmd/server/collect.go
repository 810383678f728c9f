package main

// This file gathers what every part of the server contributes — River
// workers, periodic jobs, ops, HTTP mounters, background loops — into the
// lists the server is built from. Each part adds its parameter and its line
// here; Wire supplies the parameters.

import (
	"github.com/riverqueue/river"
	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain/op"
)

func provideWorkers() (*river.Workers, error) {
	workers := river.NewWorkers()
	return workers, nil
}

func providePeriodicJobs() []*river.PeriodicJob {
	var jobs []*river.PeriodicJob
	return jobs
}

func provideOps() op.Set {
	var ops op.Set
	return ops
}

func provideMounters() []httpapi.Mounter {
	var ms []httpapi.Mounter
	return ms
}

func provideBackground() []Background {
	var bs []Background
	return bs
}

func provideMiddleware() []echoMiddleware {
	var ms []echoMiddleware
	return ms
}
