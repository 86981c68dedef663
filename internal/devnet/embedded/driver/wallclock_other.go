//go:build !unix

package driver

import "time"

// wallNow has no bubble-proof clock here: wall times are reported as zero.
func wallNow() time.Time { return time.Time{} }
