// Package mmapfile maps the start of a file read-only, for formats read in
// place (palace wing files, the packed built-in model): a reader touches
// only the pages it uses and copies nothing. Where there is no mmap the
// bytes are read into memory aligned to 8 bytes instead.
package mmapfile
