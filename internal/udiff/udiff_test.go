package udiff

import "testing"

func TestDiff(t *testing.T) {
	tests := []struct{ name, a, b, want string }{
		{"equal", "x\n", "x\n", ""},
		{"append", "a\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\nf\n",
			"--- a\n+++ b\n@@ -3,3 +3,4 @@\n c\n d\n e\n+f\n"},
		{"change in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
			"--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n"},
		{"from empty", "", "a\n", "--- a\n+++ b\n@@ -0,0 +1 @@\n+a\n"},
		{"no final newline", "a", "a\nb", "--- a\n+++ b\n@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n\\ No newline at end of file\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diff("a", "b", []byte(tt.a), []byte(tt.b)); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
