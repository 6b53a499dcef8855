package software

import (
	"fmt"
	"io"
	"strconv"
)

// Phase is a step of installing one package.
type Phase int

// Install phases, in order.
const (
	PhaseFetching  Phase = iota // npm pack is downloading the tarball
	PhaseVerifying              // hashing the tarball against its pin
	PhaseUnpacking              // extracting and checking package.aospkg
	PhaseDone                   // installed and registered
)

// String returns a lower-case name for display.
func (p Phase) String() string {
	switch p {
	case PhaseFetching:
		return "fetching"
	case PhaseVerifying:
		return "verifying"
	case PhaseUnpacking:
		return "unpacking"
	case PhaseDone:
		return "installed"
	}
	return "phase " + strconv.Itoa(int(p))
}

// Event reports install progress. Each phase starts with an event whose
// Bytes is 0 and ends with one whose Bytes equals Total; in between, events
// arrive about every megabyte.
type Event struct {
	Package string // short name, e.g. "coreutils"
	Version string
	Phase   Phase
	Bytes   int64 // bytes processed so far in this phase
	Total   int64 // bytes this phase will process; 0 if unknown
}

// ProgressWriter returns a Progress function that prints one line per phase
// to w (for a terminal or log), e.g. "sed 0.3.4: verifying 486217 bytes".
func ProgressWriter(w io.Writer) func(Event) {
	return func(e Event) {
		switch {
		case e.Phase == PhaseDone:
			fmt.Fprintf(w, "%s %s: installed\n", e.Package, e.Version)
		case e.Bytes == 0 && e.Total > 0:
			fmt.Fprintf(w, "%s %s: %s %d bytes\n", e.Package, e.Version, e.Phase, e.Total)
		case e.Bytes == 0:
			fmt.Fprintf(w, "%s %s: %s\n", e.Package, e.Version, e.Phase)
		}
	}
}

// progressWriter counts bytes written through it and reports them.
type progressWriter struct {
	report func(Event)
	ev     Event
	last   int64
}

const progressStep = 1 << 20

func newProgress(report func(Event), pin Pin, phase Phase, total int64) *progressWriter {
	p := &progressWriter{report: report, ev: Event{Package: pin.Name(), Version: pin.Version, Phase: phase, Total: total}}
	p.report(p.ev)
	return p
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.ev.Bytes += int64(len(b))
	if p.ev.Bytes-p.last >= progressStep && p.ev.Bytes != p.ev.Total {
		p.last = p.ev.Bytes
		p.report(p.ev)
	}
	return len(b), nil
}

// done sends the closing event of the phase.
func (p *progressWriter) done() {
	p.ev.Total = p.ev.Bytes
	p.report(p.ev)
}
