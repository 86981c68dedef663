package kurtosis

import "context"

// StageSources is stageSources with the parameters of Up (WithPackageDir,
// WithPackageSources, WithSourcesCache, WithLog; an enclave name is
// required as for Up).
func StageSources(ctx context.Context, params ...Parameter) (dir string, cleanup func(), err error) {
	p, err := parseAndCheckParameters(params...)
	if err != nil {
		return "", nil, err
	}
	return stageSources(ctx, p)
}

// UnpackArchive is unpackArchive.
var UnpackArchive = unpackArchive
