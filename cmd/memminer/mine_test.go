package main

import (
	"testing"
	"time"
)

func TestElapsedText(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{300 * time.Microsecond, "<1ms"},
		{600 * time.Microsecond, "1ms"},
		{42*time.Millisecond + 400*time.Microsecond, "42ms"},
		{1500 * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		if got := elapsedText(tt.d); got != tt.want {
			t.Errorf("elapsedText(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
