package changes

import (
	"sync"
	"testing"
	"time"
)

func TestBroadcaster(t *testing.T) {
	var nilB *Broadcaster
	nilB.Publish() // a nil broadcaster ignores announcements

	var b Broadcaster
	b.Publish() // no subscribers: nothing to do, nothing blocks
	a, stopA := b.Subscribe()
	c, stopC := b.Subscribe()
	defer stopC()

	// Many announcements before a read coalesce into one signal.
	for range 100 {
		b.Publish()
	}
	for name, ch := range map[string]<-chan struct{}{"a": a, "c": c} {
		select {
		case <-ch:
		case <-time.After(time.Second):
			t.Fatalf("subscriber %s got no signal", name)
		}
		select {
		case <-ch:
			t.Fatalf("subscriber %s got a second signal for one group of changes", name)
		default:
		}
	}

	// An ended subscription gets nothing more; ending it twice is fine.
	stopA()
	stopA()
	b.Publish()
	select {
	case <-a:
		t.Fatal("an ended subscription got a signal")
	case <-c:
	case <-time.After(time.Second):
		t.Fatal("the live subscriber got no signal")
	}
}

func TestBroadcasterConcurrent(t *testing.T) {
	var b Broadcaster
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 200 {
				b.Publish()
			}
		}()
		go func() {
			defer wg.Done()
			ch, stop := b.Subscribe()
			defer stop()
			b.Publish()
			<-ch // its own announcement at least arrives
		}()
	}
	wg.Wait()
}
