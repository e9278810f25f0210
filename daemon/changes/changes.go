// Package changes announces that the tools some caller may see have
// changed: a tool created, changed, approved, rejected, enabled, disabled,
// rolled back or deleted, a tool adopted by an agent's worker, a worker
// registered, reloaded or removed. It says only that something changed,
// never what: a listener re-reads the state it cares about. That keeps one
// place to announce from and nothing to get out of step.
package changes

import "sync"

// Broadcaster fans "tools changed" out to its subscribers. Announcements
// coalesce: a subscriber that has not yet read the last one gets one
// signal for many, so Publish never blocks and never queues without bound.
// The zero value is ready; a nil *Broadcaster ignores Publish.
type Broadcaster struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// Publish tells every subscriber that the tools changed.
func (b *Broadcaster) Publish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default: // one signal is already waiting; it covers this one
		}
	}
}

// Subscribe returns a channel that receives a value after each change (or
// group of changes) and a function that ends the subscription.
func (b *Broadcaster) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[chan struct{}]struct{}{}
	}
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, ch)
			b.mu.Unlock()
		})
	}
}
