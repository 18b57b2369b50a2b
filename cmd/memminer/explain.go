package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/memminer/memminer/service/api"
)

// printExplanation prints what search --explain adds after the hits: the
// query's words as relevance saw them and, when the floor dropped
// candidates, the best of them and why (docs/search.md, "Relevance").
func printExplanation(w io.Writer, ex *api.Explanation) {
	if ex.Vectors {
		fmt.Fprintf(w, "\nquery words (grounding %.2f, floor %.2f):\n", ex.Grounding, ex.MinRelevance)
	} else {
		fmt.Fprintf(w, "\nquery words (lexical search, floor %.2f):\n", ex.MinRelevance)
	}
	if len(ex.Words) == 0 {
		fmt.Fprintln(w, "  none: the query has only stopwords")
	}
	for _, q := range ex.Words {
		var notes []string
		if q.InPalace {
			notes = append(notes, "in the palace")
		} else {
			notes = append(notes, "in no note")
		}
		if q.Identifier {
			notes = append(notes, "identifier")
		}
		if q.Foreign {
			notes = append(notes, "rare in English")
		}
		if q.Cosine > 0 {
			notes = append(notes, fmt.Sprintf("best note cosine %.2f", q.Cosine))
		}
		fmt.Fprintf(w, "  %s (%s)\n", q.Word, strings.Join(notes, ", "))
	}
	if ex.MissingIdentifier != "" {
		fmt.Fprintf(w, "no searched note has the identifier %s: nothing is relevant\n", ex.MissingIdentifier)
	}
	if ex.Foreign {
		fmt.Fprintln(w, "a third of the query's words or more are rare and in no note: a question about something else, only lexical coverage counts")
	}
	for _, p := range ex.Parts {
		fmt.Fprintf(w, "coherent part: %s\n", strings.Join(p, " "))
	}
	if len(ex.NearMisses) == 0 {
		return
	}
	fmt.Fprintln(w, "\nnear misses:")
	for _, h := range ex.NearMisses {
		printHit(w, "- ", h)
	}
}
