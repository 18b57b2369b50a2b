package main

import (
	"context"

	"github.com/memminer/memminer/clients/connect"
	"github.com/memminer/memminer/daemon"
)

// skillSync is the daemon's component that keeps the connected clients'
// skills in step with the hive's published ones: at start, and whenever
// the watcher sees HIVE/skills change (a skill published, improved or
// deprecated, here or on another machine), it does to each client's
// skills folder what memminer connect run again would
// (connect.SyncSkills).
type skillSync struct {
	// stateDir holds the connections' records, home is the user's home
	// directory, whose connect lock it takes.
	stateDir, home string
}

// skillSyncComponent is the daemon's skills component for the user.
func (a *app) skillSyncComponent() *skillSync {
	home := a.home()
	return &skillSync{stateDir: connect.StateDir(a.getenv, home), home: home}
}

func (s *skillSync) Name() string { return "skills" }

// Run brings the clients in step once, for what changed while no daemon
// ran; the watcher's calls do the rest.
func (s *skillSync) Run(ctx context.Context, h *daemon.Host) error {
	s.SkillsChanged(ctx, h)
	<-ctx.Done()
	return nil
}

// SkillsChanged brings every client connected with the daemon's hive in
// step with its published skills.
func (s *skillSync) SkillsChanged(_ context.Context, h *daemon.Host) {
	log := h.Logger().With("component", s.Name())
	if s.home == "" || h.Hive() == "" {
		return
	}
	done, err := connect.SyncSkills(s.stateDir, s.home, h.Hive())
	for _, d := range done {
		if len(d.Installed)+len(d.Removed)+len(d.Kept)+len(d.Edited) > 0 {
			log.Info("skills in step with the hive", "dir", d.Dir, "installed", d.Installed, "removed", d.Removed, "kept_not_ours", d.Kept, "kept_edited_now_users", d.Edited)
		}
	}
	if err != nil {
		log.Warn("could not bring the clients' skills in step; memminer connect AGENT does it", "err", err)
	}
}

var (
	_ daemon.Component      = (*skillSync)(nil)
	_ daemon.SkillsListener = (*skillSync)(nil)
)
