package main

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	const max = 8
	tests := []struct {
		name  string
		input string
		lines []string // "" marks a line too long
	}{
		{"short lines", "a\nbc\n", []string{"a\n", "bc\n"}},
		{"exactly max", "12345678\nx\n", []string{"12345678\n", "x\n"}},
		{"one over max", "123456789\nx\n", []string{"", "x\n"}},
		{"far over max, across buffer fills", strings.Repeat("y", 100) + "\nx\n", []string{"", "x\n"}},
		{"last line without newline", "a\nlast", []string{"a\n", "last"}},
		{"crlf", "a\r\n", []string{"a\r\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tt.input), 16) // the smallest bufio allows
			var got []string
			for {
				line, tooLong, err := readLine(r, max)
				if tooLong {
					got = append(got, "")
				} else if len(line) > 0 {
					got = append(got, string(line))
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.lines, "|") {
				t.Errorf("lines %q, want %q", got, tt.lines)
			}
		})
	}
}
