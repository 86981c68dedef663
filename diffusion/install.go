package diffusion

import (
	"context"
	"time"

	"github.com/segdiff/segdiff/metrics"
)

// ReasonInstallTimeout is the rejection reason of a payload message whose
// block was not installed within the install timeout.
const ReasonInstallTimeout = metrics.ReasonInstallTimeout

// AwaitInstall keeps the "no relay before install" rule for one payload
// message of slot: it returns at once when the block is installed, else it
// parks the caller (an asynchronous validator) until the block is installed
// (noting Deferred), timeout passes (noting the rejection; ok is false) or
// ctx ends (ok is false).
//
// go-libp2p-pubsub marks a message id seen before validators run, so a
// message answered with Ignore because its block is not installed yet would
// be lost for good: later copies are dropped as duplicates and never
// requested. Parking it instead keeps it out of the message cache (so it is
// neither forwarded nor served to IWANTs) until it can be verified.
func AwaitInstall(ctx context.Context, env Env, slot uint64, timeout time.Duration) (Commitment, bool) {
	installed := env.Installed(slot)
	select {
	case <-installed:
	default:
		env.Events().Deferred()
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-installed:
		case <-t.C:
			env.Events().Rejected(ReasonInstallTimeout)
			return Commitment{}, false
		case <-ctx.Done():
			return Commitment{}, false
		}
	}
	return env.Commitment(slot)
}
