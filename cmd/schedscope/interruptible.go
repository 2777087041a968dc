package main

import (
	"context"
	"io"
)

// readChunk is one read of an interruptibleReader's source.
type readChunk struct {
	b   []byte
	err error
}

// interruptibleReader reads its source on a goroutine of its own, so that a
// Read waiting on a pipe that nobody writes to returns ctx's error as soon
// as ctx ends (a Ctrl-C) instead of holding the command.
//
// The goroutine reads ahead by one chunk. After ctx ends it stops at its next
// step; one blocked in the source's Read stays there until that Read returns
// (data, end of file, or the process's exit, which follows an interruption).
// Not safe for concurrent use.
type interruptibleReader struct {
	ctx     context.Context
	src     io.Reader
	chunks  chan readChunk
	pending []byte
	err     error
}

// readWithin returns r read so that a blocked Read ends with ctx.
func readWithin(ctx context.Context, r io.Reader) io.Reader {
	return &interruptibleReader{ctx: ctx, src: r}
}

func (r *interruptibleReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 && r.err == nil {
		if r.chunks == nil {
			r.chunks = make(chan readChunk)
			go r.pump()
		}
		select {
		case c, ok := <-r.chunks:
			if !ok {
				return 0, r.ctx.Err()
			}
			r.pending, r.err = c.b, c.err
		case <-r.ctx.Done():
			r.err = r.ctx.Err()
		}
	}
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	return 0, r.err
}

// pump reads the source into chunks until an error (io.EOF included) or
// until ctx ends.
func (r *interruptibleReader) pump() {
	defer close(r.chunks)
	for {
		b := make([]byte, 64<<10)
		n, err := r.src.Read(b)
		select {
		case r.chunks <- readChunk{b[:n], err}:
		case <-r.ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}
