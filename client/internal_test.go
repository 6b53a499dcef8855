package client

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The SSE reader takes LF, CRLF and CR line ends, comments, multi-line
// data, and refuses an event over its bound.
func TestReadSSE(t *testing.T) {
	type ev struct{ name, data string }
	for _, in := range []string{
		"event: stdout\ndata: a\ndata: b\n\n: comment\ndata:c\n\n",
		"event: stdout\r\ndata: a\r\ndata: b\r\n\r\n: comment\r\ndata:c\r\n\r\n",
		"event: stdout\rdata: a\rdata: b\r\r: comment\rdata:c\r\r",
	} {
		var got []ev
		err := readSSE(strings.NewReader(in), func(name string, data []byte) (bool, error) {
			got = append(got, ev{name, string(data)})
			return false, nil
		})
		want := []ev{{"stdout", "a\nb"}, {"message", "c"}}
		if err == nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	huge := "data: " + strings.Repeat("x", maxEvent+1) + "\n\n"
	if err := readSSE(strings.NewReader(huge), func(string, []byte) (bool, error) { return false, nil }); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("an event over the bound: %v", err)
	}
}

// Retry-After in seconds or as a date; the wait is capped.
func TestRetryWait(t *testing.T) {
	if d := parseRetryAfter("5"); d != 5*time.Second {
		t.Errorf("5: %v", d)
	}
	if d := parseRetryAfter(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)); d < 59*time.Minute || d > time.Hour {
		t.Errorf("a date an hour ahead: %v", d)
	}
	for _, v := range []string{"", "soon", "-3"} {
		if d := parseRetryAfter(v); d != 0 {
			t.Errorf("%q: %v", v, d)
		}
	}
	if d := retryWait(5*time.Second, 0, 10*time.Second); d != 5*time.Second {
		t.Errorf("Retry-After 5s: %v", d)
	}
	if d := retryWait(time.Hour, 0, 10*time.Second); d != 10*time.Second {
		t.Errorf("Retry-After 1h capped: %v", d)
	}
	if d := retryWait(0, 3, 10*time.Second); d != 800*time.Millisecond {
		t.Errorf("back-off of attempt 3: %v", d)
	}
	if d := retryWait(0, 60, 10*time.Second); d != 10*time.Second {
		t.Errorf("back-off of attempt 60: %v", d)
	}
	// An engine_lost 503 is not retried; a draining one is.
	if retryable(&Error{Status: 503, Code: CodeEngineLost}) || !retryable(&Error{Status: 503, Code: CodeShuttingDown}) || !retryable(&Error{Status: 429}) {
		t.Error("retryable")
	}
	if !errors.Is(&Error{Status: 404, Code: CodeNotFound, Message: "x"}, ErrNotFound) || errors.Is(&Error{Code: CodeNotFound}, ErrConflict) {
		t.Error("Is")
	}
}
