// Package window is the time windows the health charts read: a length cut
// into buckets of a fixed step, so every query over them is bounded in time
// and every chart has the same number of bars whatever the traffic.
package window

import (
	"time"

	"github.com/standmeet/standmeet/internal/domain"
)

// Window is a named chart window.
type Window struct {
	// Name is hour, day or week.
	Name string
	// Length is how far back it reads, Step the width of one bucket.
	Length, Step time.Duration
}

// Windows are the windows the charts offer, shortest first.
var Windows = []Window{
	{Name: "hour", Length: time.Hour, Step: 5 * time.Minute},
	{Name: "day", Length: 24 * time.Hour, Step: time.Hour},
	{Name: "week", Length: 7 * 24 * time.Hour, Step: 6 * time.Hour},
}

// Default is the window of an empty name.
const Default = "day"

// CodeInvalidWindow is the error code of a window that is not offered.
const CodeInvalidWindow = "INVALID_WINDOW"

// Of returns the window named name ("" is Default), or a validation error.
func Of(name string) (Window, error) {
	if name == "" {
		name = Default
	}
	for _, w := range Windows {
		if w.Name == name {
			return w, nil
		}
	}
	return Window{}, domain.Validation(CodeInvalidWindow, "window must be hour, day or week").WithField("window")
}

// Span returns the window's bounds at now: until is the end of the bucket
// now falls in, since is Length before it, both on Step boundaries (UTC),
// so a chart read twice in one bucket has the same bars.
func (w Window) Span(now time.Time) (since, until time.Time) {
	until = now.UTC().Truncate(w.Step).Add(w.Step)
	return until.Add(-w.Length), until
}

// Buckets returns the start of every bucket between since and until.
func (w Window) Buckets(since, until time.Time) []time.Time {
	var out []time.Time
	for t := since; t.Before(until); t = t.Add(w.Step) {
		out = append(out, t)
	}
	return out
}

// Fill returns one value per bucket between since and until, oldest first:
// the one of got whose at is the bucket's start, else a zero value whose
// start set gives the bucket's start. A reader may leave out the buckets it
// found nothing in; the charts show every one.
func Fill[T any](w Window, since, until time.Time, got []T, at func(T) time.Time, set func(*T, time.Time)) []T {
	byAt := make(map[time.Time]T, len(got))
	for _, v := range got {
		byAt[at(v).UTC()] = v
	}
	var out []T
	for _, start := range w.Buckets(since, until) {
		v := byAt[start]
		set(&v, start)
		out = append(out, v)
	}
	return out
}
