package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/clients/skill"
)

// proposeSkillArgs is a call of the propose_skill tool: the arguments say
// themselves, and SKILL.md's format is in the refusal of a bad one (every
// byte of a schema is paid in every session's context).
type proposeSkillArgs struct {
	Name    string `json:"name"`
	SkillMD string `json:"skill_md"`
}

// proposedSkill is what the propose_skill tool returns: where the
// proposal waits, relative to the hive as the other tools name files.
type proposedSkill struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Source string `json:"source"`
}

// proposeSkill is MCP's propose_skill: memminer skill propose for the
// server's wing, the SKILL.md given whole.
func (s *mcpServer) proposeSkill(_ context.Context, _ *mcp.CallToolRequest, in proposeSkillArgs) (*mcp.CallToolResult, proposedSkill, error) {
	var out proposedSkill
	err := s.call(func() error {
		if s.a.cfg.Hive == "" {
			return errors.New("no hive: start the server with --hive DIR, set MEMMINER_HIVE, or put hive: in the config file; nothing proposed")
		}
		sk, _, err := s.a.proposeSkill(s.a.cfg.Hive, in.Name, []byte(in.SkillMD))
		if err != nil {
			return skillToolError(err)
		}
		out = proposedSkill{Name: sk.Name, State: sk.State, Source: s.a.sourceName(sk.Path)}
		return nil
	})
	if err != nil {
		return nil, out, err
	}
	return toolText(func(w io.Writer) {
		fmt.Fprintf(w, "proposed skill %s (%s); it waits for a person's approval\n", out.Name, out.Source)
	}), out, nil
}

// skillToolError says what a model should do about a refused proposal.
func skillToolError(err error) error {
	switch {
	case errors.Is(err, skill.ErrBadSkill):
		return fmt.Errorf("%v; nothing proposed. skill_md starts with frontmatter: ---, name: NAME, description: what it does and when to use it, ---; then the instructions", err)
	case errors.Is(err, skill.ErrExists):
		return fmt.Errorf("%v; nothing proposed: wait for the person, or propose it under another name", err)
	case errors.Is(err, skill.ErrSecret):
		return fmt.Errorf("%v; nothing proposed: %s", err, secretAdvice)
	}
	return err
}
