package segdiff_test

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupts owns SIGINT and SIGTERM for the test binary's whole life. A
// test running something that must stop cleanly (the suite's devnets, the
// broken-network check's child suite) claims them; between such tests a
// signal ends the binary at once with 130, so that no later test starts
// after a Ctrl-C. Go keeps a signal ignored when the parent ignored it (a
// background job of a non-interactive shell), so listening is also what
// makes such a run honour Ctrl-C at all.
var interrupts struct {
	mu      sync.Mutex
	handler func(os.Signal)
}

// listenForInterrupts starts the binary's one signal listener.
func listenForInterrupts() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range ch {
			interrupts.mu.Lock()
			h := interrupts.handler
			interrupts.mu.Unlock()
			if h == nil {
				fmt.Fprintf(os.Stderr, "segdiff: %v: interrupted between tests; exit 130\n", sig)
				os.Exit(130)
			}
			h(sig)
		}
	}()
}

// claimInterrupts routes signals to h (which must return at once) until
// release is called.
func claimInterrupts(h func(os.Signal)) (release func()) {
	interrupts.mu.Lock()
	interrupts.handler = h
	interrupts.mu.Unlock()
	return func() {
		interrupts.mu.Lock()
		interrupts.handler = nil
		interrupts.mu.Unlock()
	}
}
