package inproc

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memminer/memminer/clients/skill"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/catalog"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

var _ api.Service = (*Service)(nil)

// Search searches the palace read-only, only the wings asked for loaded.
func (s *Service) Search(ctx context.Context, req api.SearchRequest) (api.SearchResult, error) {
	if _, err := req.Options(); err != nil {
		return api.SearchResult{}, err
	}
	if s.opts.Palace == nil && !palace.HasWings(s.opts.Dir) {
		// Nothing to search: say so without loading (or downloading) a model.
		return api.SearchResult{}, palace.ErrEmpty
	}
	e, err := s.embedder(ctx)
	if err != nil {
		return api.SearchResult{}, err
	}
	wings := req.Wings
	if req.Scope.MayNarrow() {
		wings = nil // every wing's domain decides what the scope sees
	}
	p, done, err := s.open(ctx, e, Read, wings)
	if err != nil {
		return api.SearchResult{}, err
	}
	defer done()
	out, err := Search(ctx, p, req)
	if err != nil {
		return out, err
	}
	s.searchSkills(req, &out)
	return out, nil
}

// searchSkills adds to out the hive's published skills that match the
// search, a shelf of their own beside the notes. The prompt hook's
// question leaves them out: the client already offers its installed
// skills to the model. Skills carry no domain: every agent sees them, as
// connect installs them into every client.
func (s *Service) searchSkills(req api.SearchRequest, out *api.SearchResult) {
	if req.Prompt || s.opts.Hive == "" {
		return
	}
	opts, err := req.Options()
	if err != nil {
		return // Search refused it first
	}
	n := opts.Results
	if n == 0 {
		n = palace.DefaultResults
	}
	found, err := skill.Search(s.opts.Hive, out.Query, opts.MinRelevance, n)
	if err != nil {
		s.warn("search the skills: %v", err)
		return
	}
	out.AddSkills(found)
}

// WakeUp builds the digest. The palace is opened read-only without an
// embedder (the digest reads stored vectors, it embeds nothing); only a
// damaged palace is reopened the usual way, with the configured model,
// so its repair embeds as a mine would.
func (s *Service) WakeUp(ctx context.Context, opts wakeup.Options) (wakeup.Digest, error) {
	p := s.opts.Palace
	if p == nil {
		var err error
		p, err = palace.Open(ctx, s.opts.Dir, palace.Options{ReadOnly: true, Logger: s.opts.Logger})
		if err != nil {
			return wakeup.Digest{}, err
		}
		if len(p.Damaged()) > 0 {
			p.Close()
			e, err := s.embedder(ctx)
			if err != nil {
				return wakeup.Digest{}, err
			}
			if p, err = s.Open(ctx, e, Read, nil); err != nil {
				return wakeup.Digest{}, err
			}
		}
		defer p.Close()
	}
	if opts.ReadFile == nil {
		opts.ReadFile = wakeup.ReadFileLimited
	}
	// A machine cut off from the others says so.
	if s.opts.Isolation != nil {
		opts.Isolated = s.opts.Isolation(ctx)
	}
	return wakeup.Build(p, opts)
}

// Remember writes the note and mines its file before it returns, so the
// note is in the next search.
func (s *Service) Remember(ctx context.Context, req api.RememberRequest) (remember.Result, error) {
	e, err := s.embedder(ctx)
	if err != nil {
		return remember.Result{}, err
	}
	p, done, err := s.open(ctx, e, Write, nil)
	if err != nil {
		return remember.Result{}, err
	}
	defer done()
	return remember.Remember(ctx, p, req.Request, s.rememberOptions(req, e))
}

// rememberOptions are the settings of a remember, resolved once: the
// hive and agents the service mines (the request's hive when the service
// has none; the daemon refuses a request of another hive before it gets
// here), and the caller's machine and note-size limit as the request
// carries them (empty: this host's machine name, the default limit).
func (s *Service) rememberOptions(req api.RememberRequest, e embed.Embedder) remember.Options {
	hive := s.opts.Hive
	if hive == "" {
		hive = req.Hive
	}
	return remember.Options{
		Hive:         hive,
		Agents:       s.opts.Agents,
		Machine:      req.Machine,
		MaxNoteBytes: req.MaxNoteBytes,
		Mine:         s.opts.MineOptions(),
		Embedder:     e,
	}
}

// Forget drops a wing from the palace (mine.Forget).
func (s *Service) Forget(ctx context.Context, req api.ForgetRequest) (mine.Forgotten, error) {
	wing, err := palace.NormalizeWingID(req.Wing)
	if err != nil {
		return mine.Forgotten{}, err
	}
	access := Write
	// A palace that is not there has no wing to forget; opening it to
	// write would create it just to say so.
	if _, statErr := os.Stat(s.opts.Dir); req.DryRun || (s.opts.Palace == nil && errors.Is(statErr, fs.ErrNotExist)) {
		access = DryRun
	}
	p, done, err := s.open(ctx, nil, access, nil)
	if err != nil {
		return mine.Forgotten{}, err
	}
	defer done()
	return mine.Forget(p, wing, mine.ForgetOptions{Hive: s.opts.Hive, Agents: s.opts.Agents, Force: req.Force, DryRun: req.DryRun})
}

// Mine mines req.Path into the palace, or says what it would change
// with DryRun.
func (s *Service) Mine(ctx context.Context, req api.MineRequest) (api.MineReply, error) {
	if !filepath.IsAbs(req.Path) {
		abs, err := filepath.Abs(req.Path)
		if err != nil {
			return api.MineReply{}, err
		}
		req.Path = abs
	}
	e, err := s.embedder(ctx)
	if err != nil {
		return api.MineReply{}, err
	}
	opts := s.opts.MineOptions()
	opts.Wing, opts.Agent, opts.DryRun = req.Wing, req.Agent, req.DryRun
	if req.Agents != nil {
		opts.Agents = req.Agents
	}
	var reembeds []api.Reembed
	// Re-embeds are reported by the caller from the reply, as the
	// daemon's are.
	opts.OnReembed = func(wing, from, to string, n int) {
		reembeds = append(reembeds, api.Reembed{Wing: wing, From: from, To: to, Notes: n})
	}
	opts.Progress = s.opts.MineProgress
	access := Write
	if req.DryRun {
		access = DryRun
	}
	// A palace of this command's own loads only the wings whose files
	// changed: the plan lists the hive once the writer lock is held.
	plan := mine.NewPlan(req.Path, opts)
	p, done, err := s.openWith(ctx, palace.Options{Embedder: e, Unchanged: plan.Unchanged}, access)
	if err != nil {
		return api.MineReply{}, err
	}
	defer done()
	sum, err := mine.MinePlan(ctx, p, plan)
	return api.MineReply{Result: api.NewMineResult(sum), Reembeds: reembeds}, err
}

// Index builds the hive's catalog from the palace.
func (s *Service) Index(ctx context.Context) (catalog.Index, error) {
	p, done, err := s.open(ctx, nil, Read, nil)
	if err != nil {
		return catalog.Index{}, err
	}
	defer done()
	return catalog.Build(p, s.opts.Hive, s.opts.Agents, wakeup.ReadFileLimited, s.opts.Domains)
}

// Status describes the palace itself, as status prints it without a
// daemon; Active and Syncthing are the caller's to fill.
func (s *Service) Status(ctx context.Context) (api.Status, error) {
	var e embed.Embedder
	reason := ""
	if s.opts.StatusModel != nil && s.opts.Palace == nil {
		var err error
		if e, reason, err = s.opts.StatusModel(ctx); err != nil {
			return api.Status{}, err
		}
	}
	p, done, err := s.open(ctx, e, Read, nil)
	if err != nil {
		return api.Status{}, err
	}
	defer done()
	st := BuildStatus(p, s.opts.ModelSpec, reason, s.opts.Enabled, s.opts.Domains)
	if s.opts.Palace == nil { // the daemon counts with its registry
		st.ConflictsOpen = s.conflictsOpen(ctx, p)
	}
	return st, nil
}

// Wings are the palace's wings as its files hold them; none when nothing
// was mined yet.
func (s *Service) Wings(ctx context.Context) ([]palace.WingInfo, error) {
	p, done, err := s.openWings(ctx)
	if err != nil || p == nil {
		return nil, err
	}
	defer done()
	return p.Wings(), nil
}
