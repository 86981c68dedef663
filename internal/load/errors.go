package load

import (
	"context"
	"errors"
	"net"
	"strings"
)

// ErrorClass is what the load makes of an error the EL returned for a sent
// transaction; it decides the retry (see Generator).
type ErrorClass string

// Error classes, as reported in BlockReport.Errors.
const (
	// ClassKnown: the pool already holds the transaction (a retry of one
	// that did arrive). Counted as sent.
	ClassKnown ErrorClass = "known"
	// ClassNonceLow: the nonce was used already (another sender, or a
	// restart). The nonce is re-read and the transaction re-signed.
	ClassNonceLow ErrorClass = "nonce_low"
	// ClassNonceGap: the nonce is ahead of what the pool accepts. The nonce
	// is re-read and the transaction re-signed.
	ClassNonceGap ErrorClass = "nonce_gap"
	// ClassUnderpriced: the fee is below the pool's minimum or does not
	// out-bid a transaction with the same nonce. Fees are raised 12.5 % and
	// the transaction re-signed.
	ClassUnderpriced ErrorClass = "underpriced"
	// ClassPoolFull: the pool (or this account's share of it) is full. The
	// same transaction is retried after a backoff.
	ClassPoolFull ErrorClass = "pool_full"
	// ClassGas: the EL priced the transaction higher than the load did (the
	// chain forked to new pricing since the load started, e.g. Amsterdam
	// after Osaka). The fork is detected again and the gas recomputed.
	ClassGas ErrorClass = "gas"
	// ClassTransport: the request did not get an answer (connection refused,
	// timeout, 5xx). Retried after a backoff.
	ClassTransport ErrorClass = "transport"
	// ClassFatal: retrying cannot help (insufficient funds, gas below the
	// intrinsic or floor cost, oversized transaction, …). The step fails.
	ClassFatal ErrorClass = "fatal"
)

// errorPatterns maps lower-case message fragments of geth (core/txpool and
// legacypool errors), reth, Nethermind, Besu and Erigon to a class; the first
// match wins, so more specific fragments come first.
var errorPatterns = []struct {
	fragment string
	class    ErrorClass
}{
	{"already known", ClassKnown},
	{"alreadyknown", ClassKnown},
	{"already imported", ClassKnown},
	{"already exists", ClassKnown},
	{"replacement transaction underpriced", ClassUnderpriced},
	{"transaction underpriced", ClassUnderpriced},
	{"underpriced", ClassUnderpriced},
	{"feetoolow", ClassUnderpriced},
	{"fee too low", ClassUnderpriced},
	{"max fee per gas less than block base fee", ClassUnderpriced},
	{"nonce too low", ClassNonceLow},
	{"oldnonce", ClassNonceLow},
	{"nonce too high", ClassNonceGap},
	{"noncegap", ClassNonceGap},
	{"nonce gap", ClassNonceGap},
	{"gapped-nonce", ClassNonceGap},
	{"future transaction tries to replace pending", ClassNonceGap},
	{"intrinsic gas too low", ClassGas},
	{"floor data gas", ClassGas},
	{"gas too low", ClassGas},
	{"txpool is full", ClassPoolFull},
	{"pool is full", ClassPoolFull},
	{"account limit exceeded", ClassPoolFull},
	{"too many", ClassPoolFull},
	{"txpool full", ClassPoolFull},
	{"connection refused", ClassTransport},
	{"connection reset", ClassTransport},
	{"eof", ClassTransport},
	{"timeout", ClassTransport},
	{"503 service unavailable", ClassTransport},
	{"502 bad gateway", ClassTransport},
}

// Classify returns the class of an error SendTransaction returned. Unknown
// messages are fatal: retrying an error nobody understood would hide it.
func Classify(err error) ErrorClass {
	if err == nil {
		return ""
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) {
		return ClassTransport
	}
	msg := strings.ToLower(err.Error())
	for _, p := range errorPatterns {
		if strings.Contains(msg, p.fragment) {
			return p.class
		}
	}
	return ClassFatal
}
