package js

import (
	"log/slog"
	"time"
)

func slogInt(k string, v int) slog.Attr           { return slog.Int(k, v) }
func slogBool(k string, v bool) slog.Attr         { return slog.Bool(k, v) }
func slogDur(k string, v time.Duration) slog.Attr { return slog.Duration(k, v) }
