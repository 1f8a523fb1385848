package trackway

import (
	"encoding/json"
	"time"
)

// Event is what Track sends (the body of POST /v1/track). PixelID and EventName are required.
type Event struct {
	PixelID   string `json:"pixel_id"`
	EventName string `json:"event_name"`
	// EventID deduplicates: made (evt_ + UUIDv7) when empty.
	EventID string `json:"event_id,omitempty"`
	// Value is a pointer so that 0 can be sent; see Float.
	Value        *float64   `json:"value,omitempty"`
	Currency     string     `json:"currency,omitempty"`
	ActionSource string     `json:"action_source,omitempty"`
	Timestamp    *time.Time `json:"timestamp,omitempty"`
	URL          string     `json:"url,omitempty"`
	Referrer     string     `json:"referrer,omitempty"`
	Title        string     `json:"title,omitempty"`
	SearchString string     `json:"search_string,omitempty"`
	// UserData (email, phone, first_name, …, client_ip_address, fbp, …) is hashed by the
	// server before it is stored.
	UserData   map[string]string `json:"user_data,omitempty"`
	CustomData map[string]any    `json:"custom_data,omitempty"`
}

// Float returns a pointer to v, for Event.Value.
func Float(v float64) *float64 { return &v }

// TrackResult is what became of one tracked event.
type TrackResult struct {
	OK      bool   `json:"ok"`
	EventID string `json:"event_id"`
	// Status is what the server answered for this event (200 when OK), or 0 when it never
	// answered.
	Status  int    `json:"status"`
	Message string `json:"message"`
	// Deduplicated: the server already had this EventID; the first event was kept.
	Deduplicated bool     `json:"deduplicated,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	// Error is the short name when not OK, e.g. "Invalid request" or "Network error".
	Error string `json:"error,omitempty"`
	Field string `json:"field,omitempty"`
}

// Pixel is a pixel as the API returns it.
type Pixel struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Domain         string `json:"domain"`
	TrackingDomain string `json:"tracking_domain"`
	Status         string `json:"status"`
	CreatedAt      string `json:"created_at"`
}

// PixelList is one page of pixels.
type PixelList struct {
	Pixels []Pixel `json:"pixels"`
	Total  int     `json:"total"`
	Limit  int     `json:"limit"`
	Offset int     `json:"offset"`
}

// PixelParams creates or updates a pixel; empty fields are left out (and unchanged by an
// update).
type PixelParams struct {
	Name           string `json:"name,omitempty"`
	Domain         string `json:"domain,omitempty"`
	TrackingDomain string `json:"tracking_domain,omitempty"`
	// Status is "active" or "paused" (update only).
	Status string `json:"status,omitempty"`
}

// EventRecord is a stored event.
type EventRecord struct {
	EventID      string            `json:"event_id"`
	EventName    string            `json:"event_name"`
	PixelID      string            `json:"pixel_id"`
	Value        *float64          `json:"value"`
	Currency     *string           `json:"currency"`
	Timestamp    string            `json:"timestamp"`
	ReceivedAt   string            `json:"received_at"`
	Status       string            `json:"status"`
	URL          *string           `json:"url"`
	Referrer     *string           `json:"referrer"`
	Title        *string           `json:"title"`
	SearchString *string           `json:"search_string"`
	ActionSource string            `json:"action_source"`
	UserData     map[string]string `json:"user_data"`
	CustomData   map[string]any    `json:"custom_data"`
	MatchQuality json.RawMessage   `json:"match_quality,omitempty"`
	// Forwarding lists the event's forwarding entries (GET of one event only).
	Forwarding []json.RawMessage `json:"forwarding,omitempty"`
}

// EventList is one page of events, newest first.
type EventList struct {
	Events []EventRecord `json:"events"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
}

// ListEventsParams filters and pages events; zero values are left out.
type ListEventsParams struct {
	Limit     int
	Offset    int
	StartDate string
	EndDate   string
	EventName string
}

// Validation is what Track would store and what each destination would be sent.
type Validation struct {
	Valid        bool              `json:"valid"`
	Event        EventRecord       `json:"event"`
	Destinations []json.RawMessage `json:"destinations"`
}

// WebhookPayload is a verified webhook delivery's body. Data depends on Event
// ("event.tracked", "event.forwarded", "pixel.created", "pixel.updated",
// "subscription.updated").
type WebhookPayload struct {
	ID        string         `json:"id"`
	Event     string         `json:"event"`
	Data      map[string]any `json:"data"`
	WebhookID string         `json:"webhook_id"`
	Timestamp string         `json:"timestamp"`
}
