package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/memminer/memminer/clients/connect"
	"github.com/memminer/memminer/service/api"
)

// statusOutput is status --json: the palace's status and the agents
// memminer connect wired in.
type statusOutput struct {
	api.Status
	Agents []connectedAgent `json:"agents"`
}

// connectedAgent is one connection status lists.
type connectedAgent struct {
	Agent string `json:"agent"`
	Wing  string `json:"wing"`
	// Scope is "user" or the project directory.
	Scope string   `json:"scope"`
	Files []string `json:"files"`
	// flags are those the installed commands carry, for doctor.
	flags []string
}

// connectedAgents lists the connections recorded for this user; none when
// there is no home or nothing is recorded.
func (a *app) connectedAgents() []connectedAgent {
	out := []connectedAgent{}
	home := a.home()
	if home == "" {
		return out
	}
	cs, err := connect.Connections(connect.StateDir(a.getenv, home))
	if err != nil {
		fmt.Fprintf(a.stderr, "memminer: cannot list connected agents: %v\n", err)
	}
	for _, c := range cs {
		out = append(out, connectedAgent{Agent: c.Agent, Wing: c.Wing, Scope: c.Scope, Files: c.Paths(), flags: c.Flags})
	}
	return out
}

func printAgents(w io.Writer, agents []connectedAgent) {
	if len(agents) == 0 {
		fmt.Fprintln(w, "agents:      none connected "+connectHint())
		return
	}
	fmt.Fprintf(w, "agents:      %d connected\n", len(agents))
	for _, ag := range agents {
		fmt.Fprintf(w, "  %s, wing %s, %s files: %s\n", ag.Agent, ag.Wing, ag.Scope, strings.Join(ag.Files, ", "))
	}
}

// connectHint says how to connect an agent, naming every client connect
// knows.
func connectHint() string {
	return "(memminer connect " + strings.Join(connect.AgentIDs(), "|") + " --wing ID)"
}
