// Package events fans what happens in the daemon (new approvals, recorded
// calls) out to whoever follows it: server-sent event streams on the
// socket API, the approvals webhook. Publishing never blocks the call
// path: a subscriber that falls a whole buffer behind is dropped (its
// channel is closed) rather than waited for.
package events

import "sync"

// Hub delivers each published value to every current subscriber. The zero
// Hub is not usable; make one with New.
type Hub[T any] struct {
	buf    int
	mu     sync.Mutex
	subs   map[*sub[T]]struct{}
	closed bool
}

type sub[T any] struct {
	ch chan T
}

// New returns a hub whose subscribers each hold up to buf values not yet
// read (at least 1).
func New[T any](buf int) *Hub[T] {
	return &Hub[T]{buf: max(buf, 1), subs: map[*sub[T]]struct{}{}}
}

// Subscribe returns a channel of the values published from now on and a
// function that ends the subscription. The channel is closed when the
// subscription ends: by cancel, by Close, or because the subscriber fell
// behind by a whole buffer (then it missed values and should say so).
func (h *Hub[T]) Subscribe() (<-chan T, func()) {
	s := &sub[T]{ch: make(chan T, h.buf)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(s.ch)
		return s.ch, func() {}
	}
	h.subs[s] = struct{}{}
	return s.ch, func() { h.drop(s) }
}

// drop ends s's subscription, once.
func (h *Hub[T]) drop(s *sub[T]) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.ch)
	}
}

// Publish hands v to every subscriber without waiting for any.
func (h *Hub[T]) Publish(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- v:
		default:
			delete(h.subs, s)
			close(s.ch)
		}
	}
}

// Len is the number of current subscribers.
func (h *Hub[T]) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Close ends every subscription; later ones end at once. Publish after
// Close delivers nothing.
func (h *Hub[T]) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		delete(h.subs, s)
		close(s.ch)
	}
}
