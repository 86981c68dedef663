package steps

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// AbortOnSignal makes SIGINT and SIGTERM stop the run cleanly (see
// Interrupt). Go keeps a signal ignored when the parent ignored it (a
// background job of a non-interactive shell), so a caller that wants Ctrl-C
// honoured there must listen, as this does. The returned function stops
// listening.
func (s *Suite) AbortOnSignal(exit func(code int)) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				s.Interrupt(sig, exit)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}

// Interrupt handles one SIGINT or SIGTERM and returns at once. The first
// stops the run in the background: every devnet being opened or open is
// closed (the embedded backend's simulations are stopped and their
// temporary files removed), the backends release what they hold, the
// unfinished report is discarded, and exit(130) ends the process. A second
// exits at once.
func (s *Suite) Interrupt(sig os.Signal, exit func(code int)) {
	if s.interrupted.Add(1) > 1 {
		exit(130)
		return
	}
	fmt.Fprintf(s.cfg.Log, "segdiff: %v: stopping devnets and discarding the unfinished report\n", sig)
	go func() {
		s.Abort()
		exit(130)
	}()
}
