//go:build !unix

package memfile

import (
	"errors"
	"io/fs"
	"os"
)

// owner is not kept where files have no unix owner.
type owner struct{}

func ownerOf(fs.FileInfo) owner { return owner{} }

func (owner) apply(*os.File) error { return nil }

// errSyncUnsupported is what fsync of a directory fails with here.
var errSyncUnsupported = errors.ErrUnsupported
