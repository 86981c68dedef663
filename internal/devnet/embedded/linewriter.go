package embedded

import (
	"bytes"
	"io"
	"sync"
)

// lineWriter writes whole lines to w, each starting with prefix, so that
// the progress of several simulations running at once stays readable. It
// is safe for concurrent use (a child's stdout and stderr share one).
type lineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix []byte
	buf    []byte
}

func newLineWriter(w io.Writer, prefix string) *lineWriter {
	return &lineWriter{w: w, prefix: []byte(prefix)}
}

// Write buffers p and writes out every complete line.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := append(append([]byte(nil), l.prefix...), l.buf[:i+1]...)
		l.buf = l.buf[i+1:]
		if _, err := l.w.Write(line); err != nil {
			return len(p), err
		}
	}
}

// Flush writes a trailing partial line, if any.
func (l *lineWriter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		_, _ = l.w.Write(append(append(append([]byte(nil), l.prefix...), l.buf...), '\n'))
		l.buf = nil
	}
}
