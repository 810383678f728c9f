package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Admin calls the admin REST API of the contract with an API key. BaseFunc
// picks the replica for each call, so a caller can spread load over
// replicas or step around a killed one.
type Admin struct {
	// BaseFunc returns the base URL (http://127.0.0.1:port) for the next call.
	BaseFunc func() string
	// Key is the owner's API key.
	Key  string
	HTTP *http.Client
}

// NewAdmin returns a client that always calls base.
func NewAdmin(base, key string) *Admin {
	return &Admin{BaseFunc: func() string { return base }, Key: key, HTTP: NewClient(64)}
}

// StatusError is a non-2xx answer.
type StatusError struct {
	Method, Path string
	Status       int
	Body         string
}

// Error implements error.
func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, e.Body)
}

// Do sends a JSON request and decodes a 2xx JSON answer into out (when not
// nil); any other status is a *StatusError.
func (a *Admin) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.BaseFunc()+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+a.Key)
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &StatusError{Method: method, Path: path, Status: resp.StatusCode, Body: string(b)}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

// Endpoint is a webhook endpoint as created (the secret is shown once).
type Endpoint struct {
	ID         string   `json:"id"`
	URL        string   `json:"url"`
	EventTypes []string `json:"event_types"`
	Secret     string   `json:"secret"`
}

// CreateWebhook registers an endpoint for the event type globs.
func (a *Admin) CreateWebhook(ctx context.Context, endpointURL string, eventTypes []string) (Endpoint, error) {
	var ep Endpoint
	err := a.Do(ctx, http.MethodPost, "/api/admin/webhooks", map[string]any{
		"url": endpointURL, "event_types": eventTypes, "description": "bench",
	}, &ep)
	if err == nil && (ep.ID == "" || ep.Secret == "") {
		err = errors.New("POST /api/admin/webhooks: answer without id or secret")
	}
	return ep, err
}

// NoteRef is what a created note says about itself.
type NoteRef struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
}

// CreateNote writes a published note through POST /api/admin/notes (the
// corpus use case; its row trigger records corpus.note.changed) and returns
// it with the moment its 201 arrived, the commit time as the client sees it.
func (a *Admin) CreateNote(ctx context.Context, title, slug string) (NoteRef, time.Time, error) {
	var n NoteRef
	err := a.Do(ctx, http.MethodPost, "/api/admin/notes", map[string]any{
		"genre": "wiki", "title": title, "slug": slug, "body": "Bench note " + title + ".", "published": true,
	}, &n)
	return n, time.Now(), err
}

// Delivery is one row of GET /api/admin/webhooks/{id}/deliveries.
type Delivery struct {
	JobID       int64   `json:"job_id"`
	EventID     string  `json:"event_id"`
	EventType   string  `json:"event_type"`
	State       string  `json:"state"`
	Attempt     int     `json:"attempt"`
	MaxAttempts int     `json:"max_attempts"`
	LastError   *string `json:"last_error"`
}

// Deliveries lists every delivery of an endpoint, following the cursor.
func (a *Admin) Deliveries(ctx context.Context, endpointID string) ([]Delivery, error) {
	var all []Delivery
	cursor := ""
	for page := 0; page < 1000; page++ {
		q := url.Values{"limit": {"200"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var p struct {
			Data       []Delivery `json:"data"`
			NextCursor *string    `json:"next_cursor"`
		}
		if err := a.Do(ctx, http.MethodGet, "/api/admin/webhooks/"+endpointID+"/deliveries?"+q.Encode(), nil, &p); err != nil {
			return nil, err
		}
		all = append(all, p.Data...)
		if p.NextCursor == nil || *p.NextCursor == "" {
			return all, nil
		}
		cursor = *p.NextCursor
	}
	return all, errors.New("deliveries: more than 1000 pages")
}

// InboundSource is a created inbound source (the secret is shown once).
type InboundSource struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	// ReceiveURL is /hooks/{id} (relative or absolute).
	ReceiveURL string `json:"receive_url"`
}

// CreateInboundSource creates a standard-webhooks inbound source.
func (a *Admin) CreateInboundSource(ctx context.Context, name string) (InboundSource, error) {
	return a.createInboundSource(ctx, map[string]any{"name": name, "verifier": "standard-webhooks"})
}

// CreateQuietInboundSource creates a standard-webhooks source that records
// no inbound.message.received events (record_events false).
func (a *Admin) CreateQuietInboundSource(ctx context.Context, name string) (InboundSource, error) {
	return a.createInboundSource(ctx, map[string]any{"name": name, "verifier": "standard-webhooks", "record_events": false})
}

func (a *Admin) createInboundSource(ctx context.Context, body map[string]any) (InboundSource, error) {
	var s InboundSource
	err := a.Do(ctx, http.MethodPost, "/api/admin/inbound-sources", body, &s)
	if err == nil && (s.ID == "" || s.Secret == "") {
		err = errors.New("POST /api/admin/inbound-sources: answer without id or secret")
	}
	return s, err
}
