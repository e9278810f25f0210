package sandbox

import (
	"math"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" for none
	}{
		{"defaults", Config{}, ""},
		{"binds", Config{Binds: []Bind{{Source: "/srv/data"}, {Source: "/home/u/in", Target: "/in", Writable: true}}}, ""},
		{"relative work dir", Config{WorkDir: "work"}, "absolute"},
		{"work dir on /tmp", Config{WorkDir: "/tmp/w"}, "/tmp"},
		{"work dir is root", Config{WorkDir: "/"}, "other than /"},
		{"bind on /usr", Config{Binds: []Bind{{Source: "/opt/x", Target: "/usr/local"}}}, "/usr"},
		{"bind over /etc", Config{Binds: []Bind{{Source: "/etc"}}}, "/etc"},
		{"bind in /tmp", Config{Binds: []Bind{{Source: "/data", Target: "/tmp/data"}}}, "/tmp"},
		{"bind in work dir", Config{Binds: []Bind{{Source: "/data", Target: "/work/data"}}}, "work dir"},
		{"bind above work dir", Config{WorkDir: "/w/x", Binds: []Bind{{Source: "/data", Target: "/w"}}}, "work dir"},
		{"relative source", Config{Binds: []Bind{{Source: "data", Target: "/data"}}}, "absolute"},
		{"unclean target", Config{Binds: []Bind{{Source: "/data", Target: "/a/../data"}}}, "clean"},
		{"relative socket dir", Config{SocketDir: "s"}, "socket dir"},
		{"half a CPU", Config{CPUs: 0.5}, ""},
		{"too many CPUs", Config{CPUs: 1e6}, "cpus"},
		{"NaN CPUs", Config{CPUs: math.NaN()}, "cpus"},
		{"cgroup parent", Config{CgroupParent: "/toolcage.slice/sandboxes"}, ""},
		{"relative cgroup parent", Config{CgroupParent: "toolcage.slice"}, "cgroup parent"},
		{"cgroup parent climbs", Config{CgroupParent: "/toolcage/../system.slice"}, "cgroup parent"},
		{"cgroup parent dot", Config{CgroupParent: "/toolcage/."}, "cgroup parent"},
		{"cgroup parent trailing slash", Config{CgroupParent: "/toolcage/"}, "cgroup parent"},
		{"cgroup parent root", Config{CgroupParent: "/"}, "cgroup parent"},
		{"cgroup parent newline", Config{CgroupParent: "/a\nb"}, "cgroup parent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestMeets(t *testing.T) {
	full := Report{UserNS: true, PidNS: true, MountNS: true, NetNS: true, IPCNS: true, UTSNS: true,
		Cgroup: "v2", LandlockABI: 4, Seccomp: true, NoNewPrivs: true, CapsDropped: true}
	if err := full.Meets(Requirements{Cgroup: true, LandlockABI: 4, Seccomp: true}); err != nil {
		t.Fatal(err)
	}
	r := full
	r.Cgroup, r.LandlockABI, r.PidNS = "none", 0, false
	err := r.Meets(Requirements{Cgroup: true, LandlockABI: 1})
	for _, want := range []string{"pid namespace", "cgroup", "Landlock ABI 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Meets = %v, want it to name %q", err, want)
		}
	}
	if err := r.Meets(Requirements{}); err == nil {
		t.Error("a report without a pid namespace meets the empty requirements")
	}
}
