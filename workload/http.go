package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// StatusError is an HTTP answer whose status is not 2xx.
type StatusError struct {
	// Code is the HTTP status code.
	Code int
	// Msg is the answer's body, trimmed.
	Msg string
}

func (e *StatusError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Msg) }

// IsStatus reports whether err is (or wraps) a StatusError with code.
func IsStatus(err error, code int) bool {
	var es *StatusError
	return errors.As(err, &es) && es.Code == code
}

// HTTPClient sends requests to one node's HTTP API.
type HTTPClient struct {
	// Base is the node's URL without a path, e.g. "http://127.0.0.1:8080".
	Base string
	// IDHeader, if set, names the header a request's ID is sent in (see
	// Do); a service that deduplicates retried writes by it says which.
	IDHeader string
	// HTTP sends the requests.
	HTTP *http.Client
}

// NewHTTPClient returns a client of the node at base that keeps a few
// connections to it open.
func NewHTTPClient(base, idHeader string) *HTTPClient {
	return &HTTPClient{Base: base, IDHeader: idHeader, HTTP: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
}

// Do sends one request, method on path with body, and returns the body of
// a 2xx answer; any other answer is a *StatusError. id, when not empty and
// IDHeader is set, goes in that header. Do never retries: a write sent
// twice could be applied twice, and the caller records what happened.
func (h *HTTPClient) Do(ctx context.Context, method, path, id, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.Base+path, strings.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	if id != "" && h.IDHeader != "" {
		req.Header.Set(h.IDHeader, id)
	}
	resp, err := h.HTTP.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", &StatusError{Code: resp.StatusCode, Msg: strings.TrimSpace(string(b))}
	}
	return string(b), nil
}
