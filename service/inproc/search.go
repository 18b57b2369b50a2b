package inproc

import (
	"context"
	"strings"

	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// Search runs req's search in p: the one way the daemon and a direct
// search do it, so both answer alike.
func Search(ctx context.Context, p *palace.Palace, req api.SearchRequest) (api.SearchResult, error) {
	opts, err := req.Options()
	if err != nil {
		return api.SearchResult{}, err
	}
	query := strings.TrimSpace(req.Query)
	if !req.Explain {
		hits, err := p.Search(ctx, query, opts)
		if err != nil {
			return api.SearchResult{}, err
		}
		return api.NewSearchResult(query, hits), nil
	}
	hits, ex, err := p.Explain(ctx, query, opts)
	if err != nil {
		return api.SearchResult{}, err
	}
	out := api.NewSearchResult(query, hits)
	out.Explanation = api.NewExplanation(query, ex)
	return out, nil
}
