// Package hivegen writes deterministic synthetic hives for benchmarks: the
// same size and seed always give byte-identical files.
package hivegen

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Options size a generated hive.
type Options struct {
	// Notes is the total number of bullet notes across all agents.
	Notes int
	// Agents is the number of agents (wings); zero means max(1, Notes/1000).
	Agents int
	// Seed makes different hives of the same size; zero is a fixed default.
	Seed uint64
}

var (
	subjects = strings.Fields(`postgres pgbouncer redis the-api gateway web-bundle electron-vite release-branch
	staging-db db-2 db-1 cron-jobs payment-sandbox auth-service token-refresh rate-limiter search-index
	build-cache ci-runner dark-mode date-picker changelog e2e-suite feature-flags s3-bucket wal-archive
	dns-records tls-certs load-balancer metrics-exporter log-pipeline backup-job migration-42 queue-worker`)
	verbs = []string{"runs on", "depends on", "was moved to", "must not touch", "is rebuilt by", "alerts through",
		"is configured in", "fails when", "is owned by", "is tested against", "replaced", "is cached by"}
	objects = strings.Fields(`kubernetes nomad terraform ansible systemd docker-compose the-monorepo vault
	grafana prometheus sentry pagerduty github-actions buildkite the-wiki the-runbook port-5432 port-6379
	us-east-1 eu-west-2 node-20 go-1.26 python-3.11 the-nightly-job the-weekly-report the-on-call-rota`)
	tails = []string{"since the last migration", "after the incident review", "per the team decision",
		"until the next release", "for compliance reasons", "because it kept timing out", "to save cost",
		"as agreed with the platform team", "which halved the latency", "so never change it by hand"}
	sections = []string{"Infrastructure", "Build", "Testing", "Decisions", "Incidents", "Conventions", "People", "Open questions"}
	markers  = []string{"", "", "", "", "", "Decision: ", "Rule: ", "Important: "}
)

// Write creates dir/agents/agent-NNN/memory.md files holding opts.Notes
// notes in all, and returns the agent ids.
func Write(dir string, opts Options) ([]string, error) {
	agents := opts.Agents
	if agents <= 0 {
		agents = max(1, opts.Notes/1000)
	}
	seed := opts.Seed
	if seed == 0 {
		seed = 20261129
	}
	rng := rand.New(rand.NewPCG(seed, uint64(opts.Notes)))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := make([]string, agents)
	for a := range agents {
		id := fmt.Sprintf("agent-%03d", a)
		ids[a] = id
		n := opts.Notes / agents
		if a < opts.Notes%agents {
			n++
		}
		var b strings.Builder
		fmt.Fprintf(&b, "---\nrole: %s agent\n---\n# %s memory\n", sections[a%len(sections)], id)
		for i := range n {
			if i%25 == 0 {
				fmt.Fprintf(&b, "\n## %s %d\n", sections[rng.IntN(len(sections))], i/25)
			}
			day := base.AddDate(0, 0, rng.IntN(330)).Format("2006-01-02")
			fmt.Fprintf(&b, "- %s%s %s %s %s (added %s).\n", markers[rng.IntN(len(markers))],
				subjects[rng.IntN(len(subjects))], verbs[rng.IntN(len(verbs))], objects[rng.IntN(len(objects))],
				tails[rng.IntN(len(tails))], day)
		}
		path := filepath.Join(dir, "agents", id, "memory.md")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
