package shellguard

import (
	"net/netip"
	"testing"

	"github.com/toolcage/toolcage/policy/netguard"
)

func TestInetAton(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string // "" when not an address
	}{
		{[]string{"169", "254", "169", "254"}, "169.254.169.254"},
		{[]string{"2852039166"}, "169.254.169.254"},
		{[]string{"0xa9fea9fe"}, "169.254.169.254"},
		{[]string{"025177524776"}, "169.254.169.254"},
		{[]string{"0251", "0376", "0251", "0376"}, "169.254.169.254"},
		{[]string{"169", "254", "43518"}, "169.254.169.254"},
		{[]string{"169", "16689662"}, "169.254.169.254"},
		{[]string{"0xa9", "0xfea9fe"}, "169.254.169.254"},
		{[]string{"00169", "254", "169", "254"}, ""}, // octal: 9 is not an octal digit
		{[]string{"0x00a9fea9fe"}, "169.254.169.254"},
		{[]string{"4294967296"}, ""},
		{[]string{"256", "1", "1", "1"}, ""},
		{[]string{"1", "1", "1", "256"}, ""},
		{[]string{"1", "65536"}, "1.1.0.0"},
		{[]string{"1", "16777216"}, ""},
		{[]string{"08"}, ""},
		{[]string{"0x"}, ""},
		{[]string{}, ""},
		{[]string{"1", "2", "3", "4", "5"}, ""},
	} {
		ip, ok := inetAton(tc.parts)
		switch {
		case tc.want == "" && ok:
			t.Errorf("inetAton(%q) = %v, want no address", tc.parts, ip)
		case tc.want != "" && (!ok || ip.String() != tc.want):
			t.Errorf("inetAton(%q) = %v %v, want %s", tc.parts, ip, ok, tc.want)
		}
	}
}

func TestMetadataRef(t *testing.T) {
	for _, s := range []string{
		"curl http://169.254.169.254/", "x=0xA9FEA9FE", "[::ffff:a9fe:a9fe]:80", "fd00:ec2::254", "http://[fd00:ec2::254%25eth0]/",
		"169-254-169-254.nip.io", "magic-a9fea9fe.nip.io", "169.254.169.254.nip.io", "/dev/tcp/169.254.169.254/80",
		"http://169.254.169.254%2f@x/", "TCP:100.100.100.200:80", "1.2.3.4.5.169.254.169.254",
	} {
		if !metadataRef(s) {
			t.Errorf("metadataRef(%q) = false", s)
		}
	}
	for _, s := range []string{
		"curl http://169.254.169.253/", "v1.2.3.4", "2852039165", "a9fea9ff.nip.io", "git show a9fea9fe", "sha256:a9fea9fe",
		"fd00:ec3::254", "echo 169 254 169 254", "1.2.3.4.5.6.7.8",
	} {
		if metadataRef(s) {
			t.Errorf("metadataRef(%q) = true", s)
		}
	}
}

// FuzzMetadataRef: any text is read without a panic, and a canonical
// address netguard calls a metadata endpoint is always found in it.
func FuzzMetadataRef(f *testing.F) {
	f.Add("http://169.254.169.254/")
	f.Add("[::ffff:169.254.169.254]")
	f.Add("0x.0x.0x.0x")
	f.Add("1-2-3-4-5.nip.io")
	f.Fuzz(func(t *testing.T, s string) {
		got := metadataRef(s)
		if ip, err := netip.ParseAddr(s); err == nil {
			if _, meta := netguard.MetadataEndpoint(ip); meta && !got {
				t.Fatalf("metadataRef(%q) = false for a metadata address", s)
			}
		}
	})
}
