package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
)

// Baseline is the committed reference a Gate compares against
// (testdata/baseline.json): p50 latencies in milliseconds by row ID,
// measured on the CI machine and rounded up generously.
type Baseline struct {
	// P50 maps a latency row's ID to its reference p50 in milliseconds.
	P50 map[string]float64 `json:"p50_ms"`
	// Factor is how many times the reference a row may take (default 2).
	Factor float64 `json:"factor,omitempty"`
	// FloorMs is an absolute slack in milliseconds: a row fails only when
	// it exceeds both Factor times its reference and the reference plus
	// FloorMs, so sub-millisecond rows do not flake on scheduling noise.
	FloorMs float64 `json:"floor_ms,omitempty"`
	// MinHitRate is the lowest acceptable V8 warm-pool hit rate in
	// percent in steady state (default 90).
	MinHitRate float64 `json:"min_hit_rate,omitempty"`
}

// ErrBadBaseline is returned for a baseline file that cannot be used.
var ErrBadBaseline = errors.New("bench: bad baseline")

// maxBaselineBytes bounds a baseline file.
const maxBaselineBytes = 1 << 20

// ParseBaseline decodes and checks a baseline.
func ParseBaseline(r io.Reader) (*Baseline, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxBaselineBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxBaselineBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrBadBaseline, maxBaselineBytes)
	}
	var b Baseline
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBaseline, err)
	}
	if b.Factor == 0 {
		b.Factor = 2
	}
	if b.MinHitRate == 0 {
		b.MinHitRate = 90
	}
	if b.Factor < 1 || b.Factor > 1000 || b.FloorMs < 0 || b.FloorMs > 1e6 || b.MinHitRate < 0 || b.MinHitRate > 100 {
		return nil, fmt.Errorf("%w: factor, floor_ms or min_hit_rate out of range", ErrBadBaseline)
	}
	for id, v := range b.P50 {
		i := rowIndex(id)
		if i < 0 || (rowDefs[i].kind > kindCreate && rowDefs[i].kind != kindFetch && rowDefs[i].kind != kindCold) {
			return nil, fmt.Errorf("%w: %q is not a latency row", ErrBadBaseline, id)
		}
		if !(v > 0 && v < 1e6) {
			return nil, fmt.Errorf("%w: row %q: p50 %v out of range", ErrBadBaseline, id, v)
		}
	}
	return &b, nil
}

// LoadBaseline reads a baseline file.
func LoadBaseline(name string) (*Baseline, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseBaseline(f)
}

// Rounds is how many times Gate measures each row; it keeps the best
// (lowest) median, so one noisy round on a shared machine cannot fail it.
const Rounds = 3

// Verdict is one gate check.
type Verdict struct {
	ID string `json:"id"`
	// Got is the best p50 (ms) or the hit rate (%); Limit what it was
	// held to.
	Got   float64 `json:"got"`
	Limit float64 `json:"limit"`
	OK    bool    `json:"ok"`
}

func (v Verdict) String() string {
	status := "ok"
	if !v.OK {
		status = "FAIL"
	}
	if v.ID == "hitrate" {
		return fmt.Sprintf("%-4s %-10s %6.1f%% (minimum %.1f%%)", status, v.ID, v.Got, v.Limit)
	}
	return fmt.Sprintf("%-4s %-10s p50 %8.2f ms (limit %.2f ms)", status, v.ID, v.Got, v.Limit)
}

// ErrGate is returned by Gate when a check failed.
var ErrGate = errors.New("bench: performance gate failed")

// Gate measures the baseline's rows Rounds times (and the warm-pool hit
// rate when cfg.Phases is set) and checks them against b. It returns
// every verdict, and an error matching ErrGate if any failed.
func Gate(ctx context.Context, cfg Config, b *Baseline) ([]Verdict, error) {
	ids := make([]string, 0, len(b.P50)+1)
	for id := range b.P50 {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if cfg.Phases != nil {
		ids = append(ids, "hitrate")
	}
	cfg.Rows = ids
	cfg.gate = true
	best := map[string]float64{}
	for range Rounds {
		rows, err := Run(ctx, cfg)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			got := r.P50
			if r.ID == "hitrate" {
				got = -r.Value // best is the highest rate
			}
			if old, ok := best[r.ID]; !ok || got < old {
				best[r.ID] = got
			}
		}
	}
	var out []Verdict
	failed := false
	for _, id := range ids {
		got, ok := best[id]
		if !ok {
			return nil, fmt.Errorf("bench: row %s was not measured", id)
		}
		var v Verdict
		if id == "hitrate" {
			v = Verdict{ID: id, Got: -got, Limit: b.MinHitRate, OK: -got >= b.MinHitRate}
		} else {
			ref := b.P50[id]
			limit := max(b.Factor*ref, ref+b.FloorMs)
			v = Verdict{ID: id, Got: got, Limit: limit, OK: got <= limit}
		}
		failed = failed || !v.OK
		out = append(out, v)
	}
	if failed {
		bad := slices.DeleteFunc(slices.Clone(out), func(v Verdict) bool { return v.OK })
		names := make([]string, len(bad))
		for i, v := range bad {
			names[i] = v.ID
		}
		return out, fmt.Errorf("%w: %s", ErrGate, strings.Join(names, ", "))
	}
	return out, nil
}
