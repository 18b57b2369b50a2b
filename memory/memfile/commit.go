package memfile

import (
	"context"
	"strings"
	"sync"
)

// Change is one memory file Write replaced (or AppendEnd appended to), as
// a Hook is told of it.
type Change struct {
	// Path is the file written.
	Path string
	// Author is who made the change (a wing), "" when the writer did not
	// say (see Describe).
	Author string
	// Message says what the change was, one line; "" when the writer did
	// not say.
	Message string
}

// Hook is told of every write Write (or AppendEnd) made, after the file is replaced and
// while the writer still holds the directory's Lock, so what it sees on
// disk is what was written. `memminer run --git-commit` commits with one.
// A hook must not write the file, and its failures are its own: the
// write has succeeded.
type Hook func(ctx context.Context, c Change)

var hooks struct {
	sync.Mutex
	next int
	m    map[int]Hook
}

// AddHook has h told of every Write from now on, until remove is called.
func AddHook(h Hook) (remove func()) {
	hooks.Lock()
	defer hooks.Unlock()
	if hooks.m == nil {
		hooks.m = map[int]Hook{}
	}
	id := hooks.next
	hooks.next++
	hooks.m[id] = h
	return func() {
		hooks.Lock()
		defer hooks.Unlock()
		delete(hooks.m, id)
	}
}

type describeKey struct{}

type description struct{ author, message string }

// Describe returns ctx saying, for the writes made with it, who makes them
// (author, a wing) and why (a one-line message such as "remember: …"),
// which the hooks are told. Writers describe their writes; an undescribed
// write still reaches the hooks, with an empty Author and Message.
func Describe(ctx context.Context, author, message string) context.Context {
	message, _, _ = strings.Cut(message, "\n")
	return context.WithValue(ctx, describeKey{}, description{author: author, message: strings.TrimSpace(message)})
}

// FirstWords is the start of a note's text for a one-line message: at
// most 40 runes of its first line.
func FirstWords(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return firstWords(line)
}

// runHooks tells every hook of a write to path.
func runHooks(ctx context.Context, path string) {
	hooks.Lock()
	list := make([]Hook, 0, len(hooks.m))
	for _, h := range hooks.m {
		list = append(list, h)
	}
	hooks.Unlock()
	if len(list) == 0 {
		return
	}
	d, _ := ctx.Value(describeKey{}).(description)
	c := Change{Path: path, Author: d.author, Message: d.message}
	for _, h := range list {
		h(ctx, c)
	}
}
