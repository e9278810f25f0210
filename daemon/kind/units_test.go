package kind

import (
	"strings"
	"testing"
)

// TestParseByteSizeUnits: one letter is binary as in Docker ("-m 512m" is
// 512 MiB), KB/MB/GB are decimal, KiB/MiB/GiB binary, in any case.
func TestParseByteSizeUnits(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"512m", 512 << 20, false},
		{"512M", 512 << 20, false},
		{"1g", 1 << 30, false},
		{"1G", 1 << 30, false},
		{"64k", 64 << 10, false},
		{"64K", 64 << 10, false},
		{"0.5g", 512 << 20, false},
		{"512 m", 512 << 20, false},
		{"512MB", 512 * 1000 * 1000, false},
		{"512mb", 512 * 1000 * 1000, false},
		{"64kB", 64000, false},
		{"512MiB", 512 << 20, false},
		{"512mi", 512 << 20, false},
		{"1", 1, false},
		{"0", 0, false},
		{"1b", 1, false},
		// The edges: just under the cap, at it, and past it.
		{"4294967295g", 4294967295 << 30, false},
		{"4294967296g", 0, true},
		{"4611686018427387904", 0, true},
		{"512mm", 0, true},
		{"m", 0, true},
		{"512 x", 0, true},
		{"-512m", 0, true},
		{".", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseByteSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// FuzzParseByteSize: any text gives a size in [0, 2^62) or an error, never
// a panic; a number with a one-letter unit is 1024 times that with the next
// smaller one.
func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"512m", "1g", "64k", "1MB", "1.5KiB", "", "1e9", "99999999999GiB", " 7 b "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseByteSize(s)
		if err != nil {
			if n != 0 {
				t.Fatalf("%q: error %v with %d", s, err, n)
			}
			return
		}
		if n < 0 || n >= 1<<62 {
			t.Fatalf("%q: %d out of range", s, n)
		}
		if num, ok := strings.CutSuffix(strings.TrimSpace(s), "m"); ok && !strings.ContainsAny(num, " \t") {
			k, err := ParseByteSize(num + "k")
			if err != nil || n/1024 != k && n != k*1024 {
				t.Fatalf("%q = %d but %sk = %d, %v", s, n, num, k, err)
			}
		}
	})
}
