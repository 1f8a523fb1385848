package trackway

import (
	"fmt"
)

// APIError is an error answer of the server ({error, message, field?}), after any retries.
// Match it with errors.As:
//
//	var apiErr *trackway.APIError
//	if errors.As(err, &apiErr) && apiErr.Status == 404 { … }
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the short name the server gave in `error`, e.g. "Invalid request", "Not found".
	Code string
	// Message says what went wrong, e.g. "Missing required field: pixel_id".
	Message string
	// Field names the field at fault, when one is.
	Field string
	// RetryAfter is the wait the server asked for, in seconds (429 only).
	RetryAfter int
}

func (e *APIError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("trackway: %d %s: %s (field %s)", e.Status, e.Code, e.Message, e.Field)
	}
	return fmt.Sprintf("trackway: %d %s: %s", e.Status, e.Code, e.Message)
}

// NetworkError means no answer came (connection error or timeout), after any retries. It
// wraps the cause, so errors.Is(err, context.DeadlineExceeded) works for a timeout.
type NetworkError struct {
	Err error
}

func (e *NetworkError) Error() string { return "trackway: request failed: " + e.Err.Error() }
func (e *NetworkError) Unwrap() error { return e.Err }

// Codes of WebhookVerificationError.
const (
	ErrCodeMissingSignature        = "missing_signature"
	ErrCodeInvalidTimestamp        = "invalid_timestamp"
	ErrCodeTimestampOutOfTolerance = "timestamp_out_of_tolerance"
	ErrCodeInvalidSignature        = "invalid_signature"
	ErrCodeInvalidPayload          = "invalid_payload"
)

// WebhookVerificationError is why VerifyWebhook refused a delivery: answer it with 400 and do
// not act on it. Code is one of the ErrCode constants.
type WebhookVerificationError struct {
	Code    string
	Message string
}

func (e *WebhookVerificationError) Error() string {
	return "trackway: webhook refused (" + e.Code + "): " + e.Message
}
