package filterdifftest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Date layouts the generator writes and the oracle reads: ISO 8601 with an
// optional fraction and an optional zone (none means UTC), or a calendar
// date (midnight UTC).
const (
	layoutZoned  = "2006-01-02T15:04:05.999999999Z07:00"
	layoutNoZone = "2006-01-02T15:04:05.999999999"
	layoutDay    = "2006-01-02"
)

// SourceDate reads one source value of a date field as the engine stores
// it: an ISO 8601 string (optional fraction and zone, or a calendar date)
// or a number, or a string of digits, counted in epoch milliseconds, or
// in epoch seconds (with an optional fraction) when epochSeconds is set.
// A field with only an epoch_second format takes numbers only. millis
// truncates the instant to its millisecond, as a date (not date_nanos)
// field stores it.
func SourceDate(v any, epochSeconds, millis bool) (time.Time, error) {
	var t time.Time
	var err error
	switch x := v.(type) {
	case json.Number:
		t, err = epoch(string(x), epochSeconds)
	case string:
		if isEpochText(x) {
			t, err = epoch(x, epochSeconds)
		} else if epochSeconds {
			err = fmt.Errorf("filterdiff: %q is not epoch seconds", x)
		} else {
			t, err = isoDate(x)
		}
	default:
		err = fmt.Errorf("filterdiff: %T is not a date", v)
	}
	if err != nil {
		return time.Time{}, err
	}
	if millis {
		t = t.Truncate(time.Millisecond) // floor, also before 1970
	}
	return t.UTC(), nil
}

// FilterDate reads a §8 date filter value: an RFC 3339 string with any
// fraction and a zone, a calendar date (midnight UTC), or integer epoch
// milliseconds. It is exact: no rounding.
func FilterDate(v any) (time.Time, error) {
	switch x := v.(type) {
	case json.Number:
		ms, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("filterdiff: date %s is not integer epoch milliseconds", x)
		}
		return time.UnixMilli(ms).UTC(), nil
	case string:
		if t, err := time.Parse(layoutZoned, x); err == nil {
			return t.UTC(), nil
		}
		if t, err := time.Parse(layoutDay, x); err == nil {
			return t.UTC(), nil
		}
		return time.Time{}, fmt.Errorf("filterdiff: %q is not RFC 3339", x)
	}
	return time.Time{}, fmt.Errorf("filterdiff: %T is not a date value", v)
}

func isoDate(s string) (time.Time, error) {
	for _, layout := range []string{layoutZoned, layoutNoZone, layoutDay} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("filterdiff: %q is not an ISO 8601 date", s)
}

// isEpochText reports whether s is an optionally negative decimal number.
func isEpochText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	return whole != "" && strings.Trim(whole, "0123456789") == "" && strings.Trim(frac, "0123456789") == ""
}

// epoch reads decimal epoch milliseconds or seconds exactly (fractions to
// the nanosecond).
func epoch(s string, seconds bool) (time.Time, error) {
	if !isEpochText(s) {
		return time.Time{}, fmt.Errorf("filterdiff: %q is not an epoch number", s)
	}
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	digits := 6 // a fraction of a millisecond, in nanoseconds
	if seconds {
		digits = 9
	}
	if len(frac) > digits {
		return time.Time{}, fmt.Errorf("filterdiff: %q is finer than a nanosecond", s)
	}
	f, _ := strconv.ParseInt(frac+strings.Repeat("0", digits-len(frac)), 10, 64)
	sec, nsec := n, f
	if !seconds {
		sec, nsec = n/1000, n%1000*int64(time.Millisecond)+f
	}
	if neg {
		sec, nsec = -sec, -nsec
	}
	return time.Unix(sec, nsec).UTC(), nil
}
