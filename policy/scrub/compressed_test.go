package scrub

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// xzWith compresses d as xz with a dictionary of dict bytes declared.
func xzWith(t testing.TB, d string, dict int) []byte {
	var b bytes.Buffer
	w, err := xz.WriterConfig{DictCap: dict}.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, d)
	w.Close()
	return b.Bytes()
}

// zstdWith compresses d as zstd with a window of window bytes, in a frame
// that declares its content size or not.
func zstdWith(t testing.TB, d string, window int, single bool) []byte {
	w, err := zstd.NewWriter(nil, zstd.WithWindowSize(window), zstd.WithSingleSegment(single))
	if err != nil {
		t.Fatal(err)
	}
	return w.EncodeAll([]byte(d), nil)
}

func TestXZDictCap(t *testing.T) {
	for _, dict := range []int{4 << 10, 1 << 20, 3 << 20, 8 << 20, 64 << 20} {
		got, ok := xzDictCap(xzWith(t, "some text", dict))
		if !ok || got != dict {
			t.Errorf("dictionary of %d: read %d, %v", dict, got, ok)
		}
	}
	whole := xzWith(t, "some text", 1<<20)
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"stream header only", whole[:12]},
		{"cut inside the block header", whole[:15]},
		{"no block (index first)", append(append([]byte{}, whole[:12]...), 0, 1, 0, 0)},
		{"a filter that is not LZMA2", append(append([]byte{}, whole[:12]...), 2, 0, 0x03, 1, 0, 0)},
		{"LZMA2 with two property bytes", append(append([]byte{}, whole[:12]...), 2, 0, 0x21, 2, 8, 8)},
		{"a size varint that never ends", append(append([]byte{}, whole[:12]...), 2, 0x40, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)},
		{"an invalid dictionary code", append(append([]byte{}, whole[:12]...), 2, 0, 0x21, 1, 41)},
	} {
		if got, ok := xzDictCap(c.b); ok {
			t.Errorf("%s: read %d, want not ok", c.name, got)
		}
	}
}

// zstdWindow agrees with the zstd package's own reading of a frame header:
// the window descriptor, or a single segment's content size.
func TestZstdWindow(t *testing.T) {
	for _, c := range []struct {
		window int
		single bool
		text   string
	}{
		{1 << 10, false, "short"},
		{1 << 20, false, strings.Repeat("a line of text\n", 100)},
		{1 << 20, false, strings.Repeat("a longer line of text\n", 100_000)},
		{8 << 20, false, strings.Repeat("x", 9<<20)},
		{1 << 20, true, "short"},
		{1 << 20, true, strings.Repeat("y", 300)},
		{1 << 20, true, strings.Repeat("z", 70_000)},
	} {
		b := zstdWith(t, c.text, c.window, c.single)
		got, ok := zstdWindow(b)
		if want, known := headerWindow(b); !ok || !known || got != want {
			t.Errorf("window %d, single %v, %d bytes: read %d, %v, the zstd package reads %d, %v", c.window, c.single, len(c.text), got, ok, want, known)
		}
	}
	if _, ok := zstdWindow([]byte("\x28\xb5\x2f\xfd\xe0")); ok {
		t.Error("a header cut short was read")
	}
}

// headerWindow is the window the zstd package reads from a frame header,
// capped as zstdWindow caps it.
func headerWindow(b []byte) (int, bool) {
	var h zstd.Header
	if h.Decode(b) != nil || h.Skippable {
		return 0, false
	}
	if h.SingleSegment {
		return int(min(h.FrameContentSize, 1<<40)), h.HasFCS
	}
	return int(min(h.WindowSize, 1<<40)), true
}

// A stream that declares more state than maxStreamState is not inflated:
// it is read as text (a secret inside it is a gap, written down in
// docs/security.md), and its dictionary is never allocated.
func TestInflateRefusesLargeState(t *testing.T) {
	const known = "Zk3p_Known-Secret.7781qW"
	s := newTestScrubber(t, map[string]string{"API_KEY": known})
	for name, dec := range map[string][]byte{
		"xz -9 (64 MiB dictionary)": xzWith(t, "X="+known, 64<<20),
		"zstd --long (128 MiB window)": func() []byte {
			b := zstdWith(t, "X="+known, 1<<20, false)
			b[5] = 17 << 3 // the window descriptor: 2^27
			return b
		}(),
	} {
		in := base64.StdEncoding.EncodeToString(dec)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out := s.Scrub(in)
		runtime.ReadMemStats(&after)
		if out != in {
			t.Errorf("%s: changed to %q", name, out)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
			t.Errorf("%s: allocated %d MiB", name, n>>20)
		}
	}
}

// The decoders' state allowance bounds a text of many small streams: a
// few hundred xz streams, each declaring an 8 MiB dictionary, cost the
// allowance (per pass), not 2 GiB; the first streams are still searched.
func TestInflateStateAllowance(t *testing.T) {
	const known = "Zk3p_Known-Secret.7781qW"
	s := newTestScrubber(t, map[string]string{"API_KEY": known})
	one := base64.StdEncoding.EncodeToString(xzWith(t, "X="+known, 8<<20))
	benign := base64.StdEncoding.EncodeToString(xzWith(t, "nothing here", 8<<20))
	in := one + "\n" + strings.Repeat(benign+"\n", 250)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := s.Scrub(in)
	runtime.ReadMemStats(&after)
	if strings.Contains(inflating(false)(out), known) {
		t.Error("the first stream's secret leaked")
	}
	// Each of Scrub's passes has its own allowance.
	if n := after.TotalAlloc - before.TotalAlloc; n > maxPasses*(maxStatePerText+8<<20) {
		t.Errorf("allocated %d MiB for %d streams", n>>20, 251)
	}
}

// Hex and base64 of each format, with a secret in a document of several
// lines, give no secret back; the same documents without a secret are left
// alone.
func TestInflateFormats(t *testing.T) {
	const known = "Zk3p_Known-Secret.7781qW"
	s := newTestScrubber(t, map[string]string{"API_KEY": known})
	doc := "HOME=/home/app\nAPI_KEY=" + known + "\nLANG=C\n"
	for _, c := range compressors {
		for _, enc := range []struct {
			name   string
			encode func([]byte) string
			read   func(string) string
		}{
			{"base64", base64.StdEncoding.EncodeToString, inflating(false)},
			{"hex", hex.EncodeToString, inflating(true)},
		} {
			in := "archive: " + enc.encode(c.compress(doc)) + " (end)"
			if !strings.Contains(enc.read(in), known) {
				t.Fatalf("%s | %s: the test's reader finds no secret in its input", c.name, enc.name)
			}
			if out := s.Scrub(in); strings.Contains(enc.read(out), known) {
				t.Errorf("%s | %s: secret left in %.120q", c.name, enc.name, out)
			}
			benign := "archive: " + enc.encode(c.compress("HOME=/home/app\nLANG=C\n")) + " (end)"
			if out := s.Scrub(benign); out != benign {
				t.Errorf("%s | %s: benign archive changed to %.120q", c.name, enc.name, out)
			}
		}
	}
}

func FuzzXZDictCap(f *testing.F) {
	f.Add(xzWith(f, "seed", 1<<20))
	f.Add([]byte("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46\x02\xc0\xff\xff\x21\x01\x16"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, ok := xzDictCap(b); ok && d < 4096 {
			t.Fatalf("dictionary %d read from % x", d, b)
		}
	})
}

func FuzzZstdWindow(f *testing.F) {
	f.Add(zstdWith(f, "seed", 1<<20, false))
	f.Add(zstdWith(f, "seed", 1<<20, true))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, ok := zstdWindow(append([]byte("\x28\xb5\x2f\xfd"), b...))
		want, known := headerWindow(append([]byte("\x28\xb5\x2f\xfd"), b...))
		if ok && known && w != want {
			t.Fatalf("window %d read from % x, the zstd package reads %d", w, b, want)
		}
	})
}
