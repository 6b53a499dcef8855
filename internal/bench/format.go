package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes rows as an aligned table.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tp50\tp95\tn\tunit\t")
	for _, r := range rows {
		p50, p95 := fmt.Sprintf("%.2f", r.P50), fmt.Sprintf("%.2f", r.P95)
		if !r.Latency() {
			p50, p95 = fmt.Sprintf("%.2f", r.Value), "-"
		}
		unit := r.Unit
		if r.Note != "" {
			unit += " (" + r.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", r.Label, p50, p95, r.N, unit)
	}
	return tw.Flush()
}

// WriteJSON writes rows as a JSON array, one object per row.
func WriteJSON(w io.Writer, rows []Row) error {
	if rows == nil {
		rows = []Row{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}
