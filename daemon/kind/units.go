package kind

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ByteSize is a size written as "64MiB", "1MB", "100000" or a number.
type ByteSize int64

// MarshalJSON writes the size as a plain number of bytes.
func (b ByteSize) MarshalJSON() ([]byte, error) { return json.Marshal(int64(b)) }

// UnmarshalJSON reads a number of bytes or a string with a unit.
func (b *ByteSize) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		v, err := ParseByteSize(s)
		if err != nil {
			return err
		}
		*b = ByteSize(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("bad size %s: want e.g. \"64MiB\"", data)
	}
	*b = ByteSize(n)
	return nil
}

// sizeUnits: a single letter means what Docker's "-m 512m" means, binary
// (512m is 512 MiB); the written-out SI units stay decimal (1MB is 1,000,000
// bytes); KiB, MiB and GiB are binary. Case does not matter.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30,
	"kb": 1000, "mb": 1000 * 1000, "gb": 1000 * 1000 * 1000,
	"ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20, "gi": 1 << 30, "gib": 1 << 30,
}

// ParseByteSize parses "64MiB", "512m" (MiB, as Docker), "1 MB" (decimal)
// or "1048576".
func ParseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("bad size %q: want e.g. \"64MiB\" or \"1MB\"", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %q: %w", s, err)
	}
	v := f * float64(mult)
	if v >= 1<<62 {
		return 0, errors.New("size " + strconv.Quote(s) + " is too large")
	}
	return int64(v), nil
}

// Duration is a duration written as "5s" (a block's own timeouts).
type Duration time.Duration

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "5s", "1m30s".
func (d *Duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("bad duration %s: want e.g. \"5s\"", data)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q: want e.g. \"5s\"", s)
	}
	*d = Duration(v)
	return nil
}
