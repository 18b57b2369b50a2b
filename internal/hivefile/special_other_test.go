//go:build !unix

package hivefile

import "testing"

func specialFiles(*testing.T, string) []readCase { return nil }
