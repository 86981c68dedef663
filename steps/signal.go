package steps

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// AbortOnSignal makes SIGINT and SIGTERM stop the run cleanly: every devnet
// being opened or open is closed (the embedded backend's simulations are
// stopped and their temporary files removed), the backends release what
// they hold, the unfinished report is discarded, and exit(130) ends the
// process. A second signal during that exits at once. The returned
// function stops listening.
func (s *Suite) AbortOnSignal(exit func(code int)) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			fmt.Fprintf(s.cfg.Log, "segdiff: %v: stopping devnets and discarding the unfinished report\n", sig)
			go func() {
				<-ch
				exit(130)
			}()
			s.Abort()
			exit(130)
		case <-done:
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
