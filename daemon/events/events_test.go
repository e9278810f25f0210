package events

import (
	"sync"
	"testing"
)

func TestHub(t *testing.T) {
	h := New[int](2)
	a, cancelA := h.Subscribe()
	b, cancelB := h.Subscribe()
	h.Publish(1)
	h.Publish(2)
	if got := []int{<-a, <-a}; got[0] != 1 || got[1] != 2 {
		t.Errorf("a got %v", got)
	}
	// b has not read: its buffer (2) is full, so the third value drops it
	// instead of blocking the publisher.
	h.Publish(3)
	if got := []int{<-b, <-b}; got[0] != 1 || got[1] != 2 {
		t.Errorf("b got %v", got)
	}
	if _, ok := <-b; ok {
		t.Error("a subscriber a whole buffer behind was kept")
	}
	cancelB() // after the drop: a no-op
	if v := <-a; v != 3 {
		t.Errorf("a got %d", v)
	}
	if h.Len() != 1 {
		t.Errorf("%d subscribers, want 1", h.Len())
	}
	cancelA()
	cancelA()
	if _, ok := <-a; ok || h.Len() != 0 {
		t.Error("cancel did not end the subscription")
	}
	c, _ := h.Subscribe()
	h.Close()
	if _, ok := <-c; ok {
		t.Error("Close did not end the subscription")
	}
	d, cancelD := h.Subscribe()
	if _, ok := <-d; ok {
		t.Error("a subscription after Close is open")
	}
	cancelD()
	h.Publish(4) // nothing to deliver to, no panic
}

// TestHubConcurrent: publishers, subscribers and cancels at once (run
// with -race).
func TestHubConcurrent(t *testing.T) {
	h := New[int](8)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range 200 {
				h.Publish(i)
			}
		})
		wg.Go(func() {
			for range 50 {
				ch, cancel := h.Subscribe()
				select {
				case <-ch:
				default:
				}
				cancel()
			}
		})
	}
	wg.Wait()
	h.Close()
	if h.Len() != 0 {
		t.Errorf("%d subscribers after Close", h.Len())
	}
}
